"""Hand-written mutants for the pipeline-loss test bed (tests/test_eval_oracle.py) until the
mutation generator (`redline.eval.mutate`) lands: real-looking functions in Python, JavaScript,
TypeScript and Go, each with one line changed the way an operator of `eval/truth.py` would.

Several files repeat lines on purpose (`return None`, `}`, `if err != nil {`, `i += 1`), so a
quote alone does not say where a finding belongs and the line number has to break the tie.
"""

from __future__ import annotations

from redline.eval.truth import Mutant, PlantedBug

_INVENTORY = '''\
"""Stock levels per warehouse."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass
class Item:
    sku: str
    quantity: int
    reserved: int = 0


def available(item: Item) -> int:
    if item is None:
        return 0
    return item.quantity - item.reserved


def find(items: list[Item], sku: str) -> Item | None:
    for item in items:
        if item.sku == sku:
            return item
    return None


def last_items(items: list[Item], n: int) -> list[Item]:
    if n <= 0:
        return []
    return items[len(items) - n :]


def restock(items: list[Item], sku: str, amount: int) -> Item | None:
    item = find(items, sku)
    if item is None:
        return None
    if amount < 0:
        raise ValueError("amount must be positive")
    item.quantity += amount
    return item


def low_stock(items: list[Item], threshold: int) -> list[str]:
    low = []
    i = 0
    while i < len(items):
        if available(items[i]) < threshold and items[i].quantity > 0:
            low.append(items[i].sku)
        i += 1
    return low


def load(path: str, warehouse: str) -> list[Item]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT sku, quantity, reserved FROM stock WHERE warehouse = ?", (warehouse,)
        ).fetchall()
    finally:
        conn.close()
    return [Item(sku, quantity, reserved) for sku, quantity, reserved in rows]


def read_config(path: str) -> dict[str, str]:
    config = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "=" in line:
                key, value = line.split("=", 1)
                config[key.strip()] = value.strip()
    return config
'''

_CART_JS = """\
'use strict';

const TAX_RATE = 0.2;

function subtotal(lines) {
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    total += lines[i].price * lines[i].quantity;
  }
  return total;
}

function withTax(amount) {
  return Math.round(amount * (1 + TAX_RATE) * 100) / 100;
}

function discount(total, coupon) {
  if (coupon == null) {
    return total;
  }
  if (coupon.expires < Date.now()) {
    return total;
  }
  return total - Math.min(total, coupon.amount);
}

async function checkout(cart, api) {
  const total = withTax(discount(subtotal(cart.lines), cart.coupon));
  const payment = await api.charge(cart.customerId, total);
  if (!payment.ok) {
    throw new Error(`payment failed: ${payment.error}`);
  }
  return payment.id;
}

function isEligible(user, cart) {
  return user.verified && cart.lines.length > 0;
}

module.exports = { subtotal, withTax, discount, checkout, isEligible };
"""

_USERS_TS = """\
import { Database } from './db';

export interface User {
  id: string;
  email: string;
  active: boolean;
}

export async function findUser(db: Database, email: string): Promise<User | null> {
  const rows = await db.query('SELECT id, email, active FROM users WHERE email = $1', [email]);
  if (rows.length === 0) {
    return null;
  }
  return rows[0] as User;
}

export function activeUsers(users: User[]): User[] {
  return users.filter((u) => u.active);
}

export async function deactivate(db: Database, id: string): Promise<void> {
  try {
    await db.execute('UPDATE users SET active = false WHERE id = $1', [id]);
  } catch (err) {
    throw new Error(`could not deactivate ${id}: ${err}`);
  }
}

export function pageOf<T>(items: T[], page: number, size: number): T[] {
  const start = page * size;
  return items.slice(start, start + size);
}

export function sameDomain(a: User, b: User): boolean {
  const da = a.email.split('@')[1];
  const db = b.email.split('@')[1];
  return da === db;
}
"""

_STORE_GO = """\
package store

import (
\t"errors"
\t"fmt"
\t"os"
\t"strings"
)

var ErrNotFound = errors.New("not found")

type Store struct {
\tdir   string
\tlimit int
}

func (s *Store) Read(name string) ([]byte, error) {
\tf, err := os.Open(s.dir + "/" + name)
\tif err != nil {
\t\treturn nil, err
\t}
\tdefer f.Close()
\tbuf := make([]byte, s.limit)
\tn, err := f.Read(buf)
\tif err != nil {
\t\treturn nil, err
\t}
\treturn buf[:n], nil
}

func (s *Store) Names(prefix string) ([]string, error) {
\tentries, err := os.ReadDir(s.dir)
\tif err != nil {
\t\treturn nil, err
\t}
\tvar out []string
\tfor _, e := range entries {
\t\tif strings.HasPrefix(e.Name(), prefix) {
\t\t\tout = append(out, e.Name())
\t\t}
\t}
\treturn out, nil
}

func Retry(attempts int, f func() error) error {
\tvar err error
\tfor i := 0; i < attempts; i++ {
\t\tif err = f(); err == nil {
\t\t\treturn nil
\t\t}
\t}
\treturn fmt.Errorf("after %d attempts: %w", attempts, err)
}
"""


def _mutant(
    source: str,
    file: str,
    language: str,
    operator: str,
    function: str,
    description: str,
    old: str,
    new: str,
    occurrence: int = 1,
) -> Mutant:
    """`source` with the `occurrence`-th line containing `old` changed to contain `new`."""
    lines = source.split("\n")
    hits = [i for i, line in enumerate(lines) if old in line]
    i = hits[occurrence - 1]
    original = lines[i]
    lines[i] = original.replace(old, new, 1)
    bug = PlantedBug(operator, language, file, (i + 1,), function, description, original, lines[i])
    return Mutant(bug=bug, source="\n".join(lines))


PY, JS, TS, GO = "app/inventory.py", "web/cart.js", "src/users.ts", "store/store.go"

HAND_MUTANTS: list[Mutant] = [
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "off_by_one",
        "last_items",
        "slice start is off by one: returns n + 1 items",
        "len(items) - n :",
        "len(items) - n - 1 :",
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "flipped_comparison",
        "available",
        "reserved stock is added instead of subtracted",
        "item.quantity - item.reserved",
        "item.quantity + item.reserved",
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "negated_condition",
        "restock",
        "negative amounts are accepted and positive ones rejected",
        "if amount < 0:",
        "if not amount < 0:",
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "and_or_swap",
        "low_stock",
        "items out of stock are reported as low",
        "threshold and items[i]",
        "threshold or items[i]",
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "wrong_constant",
        "available",
        "a missing item reports one unit available",
        "return 0",
        "return 1",
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "missing_return",
        "find",
        "the loop never returns the found item",
        "            return item",
        "            item",
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "injection",
        "load",
        "warehouse is concatenated into the SQL query",
        'WHERE warehouse = ?", (warehouse,)',
        'WHERE warehouse = \'" + warehouse + "\'"',
    ),
    _mutant(
        _INVENTORY,
        PY,
        "python",
        "wrong_variable",
        "restock",
        "returns None instead of the restocked item",
        "    return item",
        "    return None",
        occurrence=3,
    ),
    _mutant(
        _CART_JS,
        JS,
        "javascript",
        "off_by_one",
        "subtotal",
        "the loop reads one past the end of lines",
        "i < lines.length",
        "i <= lines.length",
    ),
    _mutant(
        _CART_JS,
        JS,
        "javascript",
        "removed_await",
        "checkout",
        "the charge promise is not awaited: payment.ok is undefined",
        "await api.charge",
        "api.charge",
    ),
    _mutant(
        _CART_JS,
        JS,
        "javascript",
        "and_or_swap",
        "isEligible",
        "unverified users are eligible",
        "user.verified && cart",
        "user.verified || cart",
    ),
    _mutant(
        _CART_JS,
        JS,
        "javascript",
        "flipped_comparison",
        "discount",
        "valid coupons are ignored and expired ones applied",
        "coupon.expires < Date.now()",
        "coupon.expires > Date.now()",
    ),
    _mutant(
        _USERS_TS,
        TS,
        "typescript",
        "off_by_one",
        "pageOf",
        "pages overlap by one item",
        "start + size",
        "start + size + 1",
    ),
    _mutant(
        _USERS_TS,
        TS,
        "typescript",
        "swallowed_exception",
        "deactivate",
        "a failed update is silently ignored",
        "throw new Error(`could not deactivate ${id}: ${err}`);",
        "// ignore",
    ),
    _mutant(
        _USERS_TS,
        TS,
        "typescript",
        "wrong_variable",
        "sameDomain",
        "compares a's domain with itself",
        "return da === db;",
        "return da === da;",
    ),
    _mutant(
        _STORE_GO,
        GO,
        "go",
        "swapped_arguments",
        "Retry",
        "format arguments swapped",
        "attempts, err)",
        "err, attempts)",
    ),
    _mutant(
        _STORE_GO,
        GO,
        "go",
        "off_by_one",
        "Retry",
        "one attempt too few",
        "i < attempts",
        "i < attempts-1",
    ),
    _mutant(
        _STORE_GO,
        GO,
        "go",
        "negated_condition",
        "Read",
        "a successful read is returned as an error",
        "if err != nil {",
        "if err == nil {",
        occurrence=2,
    ),
    _mutant(
        _STORE_GO,
        GO,
        "go",
        "wrong_variable",
        "Names",
        "appends nothing useful: the prefix instead of the name",
        "out = append(out, e.Name())",
        "out = append(out, prefix)",
    ),
]
