"""Stock keeping for a small shop: items, reservations, reorder reports."""

import json
import sqlite3
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

LOW_STOCK = 5


@dataclass
class Item:
    sku: str
    name: str
    price: float
    quantity: int
    tags: list[str] = field(default_factory=list)


class Inventory:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.items: dict[str, Item] = {}

    def find(self, sku: str) -> Item | None:
        row = self.db.execute(
            "SELECT sku, name, price, quantity FROM items WHERE sku = ?", (sku,)
        ).fetchone()
        if row is None:
            return None
        return Item(row[0], row[1], row[2], row[3])

    def reserve(self, sku: str, count: int) -> bool:
        item = self.find(sku)
        if item is None:
            return False
        if count <= 0 or item.quantity < count:
            return False
        item.quantity -= count
        self.db.execute("UPDATE items SET quantity = ? WHERE sku = ?", (item.quantity, sku))
        return True

    def search(self, name: str, limit: int) -> list[Item]:
        rows = self.db.execute(
            "SELECT sku, name, price, quantity FROM items WHERE name LIKE ?", (name,)
        ).fetchall()
        found: list[Item] = []
        for row in rows:
            if len(found) >= limit:
                break
            found.append(Item(row[0], row[1], row[2], row[3]))
        return found


def total_value(items: list[Item]) -> float:
    total = 0.0
    for i in range(len(items)):
        item = items[i]
        total += item.price * item.quantity
    return round(total, 2)


def low_stock(items: list[Item], threshold: int, minimum: int) -> list[str]:
    low = []
    for item in items:
        if item.quantity < threshold and item.quantity >= minimum:
            low.append(item.sku)
    return low


def first_page(items: list[Item], page_size: int) -> list[Item]:
    ordered = sorted(items, key=lambda it: it.sku)
    return ordered[:page_size]


def page(items: list[Item], start: int, size: int) -> list[Item]:
    end = start + size
    if start < 0 or end > len(items):
        return []
    return items[start:end]


def tagged(items: list[Item], tag: str) -> list[Item]:
    matches = []
    for item in items:
        if not item.tags:
            continue
        if tag in item.tags:
            matches.append(item)
    return matches


def load_items(path: Path) -> list[Item]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
        records = data.get("items", [])
    items = []
    for record in records:
        if record.get("sku") is None:
            continue
        items.append(Item(record["sku"], record["name"], record["price"], record["qty"]))
    return items


def save_report(path: Path, items: list[Item]) -> int:
    lines = [f"{item.sku}\t{item.quantity}" for item in items]
    out = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        out.write("\n".join(lines))
    finally:
        out.close()
    return len(lines)


def parse_quantity(text: str, default: int) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        return default
    if value < 0:
        raise ValueError(f"negative quantity: {text}")
    return value


def archive(directory: str, name: str) -> str:
    result = subprocess.run(
        ["tar", "-czf", name + ".tar.gz", directory], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return name + ".tar.gz"


def read_skus(path: Path, limit: int) -> list[str]:
    skus: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            skus.append(line)
    return skus[:limit]
