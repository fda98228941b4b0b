"""Order processing: pricing, discounts, and an async checkout against a payment service."""

import asyncio
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_ITEMS = 50
RETRIES = 3


@dataclass
class Line:
    sku: str
    quantity: int
    unit_price: float


@dataclass
class Order:
    order_id: str
    customer: str
    lines: list[Line]
    coupon: str | None = None


def subtotal(order: Order) -> float:
    amount = 0.0
    for line in order.lines:
        amount += line.quantity * line.unit_price
    return amount


def discount(amount: float, coupon: str | None, loyal: bool) -> float:
    if coupon is None:
        return 0.0
    rate = 0.1 if coupon == "SAVE10" else 0.05
    if loyal and amount > 100:
        rate += 0.05
    return round(amount * rate, 2)


def validate(order: Order) -> list[str]:
    problems = []
    if len(order.lines) > MAX_ITEMS:
        problems.append("too many lines")
    for index, line in enumerate(order.lines):
        if line.quantity <= 0 or line.unit_price < 0:
            problems.append(f"line {index}: bad quantity or price")
    return problems


def merge_lines(first: list[Line], second: list[Line]) -> list[Line]:
    merged: dict[str, Line] = {}
    for line in first + second:
        existing = merged.get(line.sku)
        if existing is not None:
            existing.quantity += line.quantity
            continue
        merged[line.sku] = Line(line.sku, line.quantity, line.unit_price)
    return list(merged.values())


def split_batches(orders: list[Order], size: int) -> list[list[Order]]:
    batches = []
    start = 0
    while start < len(orders):
        batches.append(orders[start : start + size])
        start += size
    return batches


class PaymentError(Exception):
    pass


async def charge(client: "PaymentClient", customer: str, amount: float) -> str:
    for attempt in range(RETRIES):
        try:
            receipt = await client.pay(customer, amount)
            return receipt
        except PaymentError:
            log.warning("payment failed for %s (attempt %d)", customer, attempt)
            await asyncio.sleep(0.5 * attempt)
    raise PaymentError(f"could not charge {customer}")


async def checkout(client: "PaymentClient", order: Order, loyal: bool) -> str | None:
    problems = validate(order)
    if problems:
        log.info("order %s rejected: %s", order.order_id, problems)
        return None
    amount = subtotal(order) - discount(subtotal(order), order.coupon, loyal)
    receipt = await charge(client, order.customer, amount)
    await client.notify(order.customer, receipt)
    return receipt


class PaymentClient:
    def __init__(self, base_url: str, timeout: float = 10.0) -> None:
        self.base_url = base_url
        self.timeout = timeout

    async def pay(self, customer: str, amount: float) -> str:
        await asyncio.sleep(0)
        if amount <= 0:
            raise PaymentError("nothing to charge")
        return f"{customer}-{amount:.2f}"

    async def notify(self, customer: str, receipt: str) -> None:
        await asyncio.sleep(0)
        log.info("sent %s to %s", receipt, customer)
