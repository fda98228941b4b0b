// Order service: pricing, batching, persistence and a nightly export.
"use strict";

const fs = require("fs/promises");
const { execFile } = require("child_process");

const MAX_LINES = 50;
const RETRIES = 3;

function subtotal(order) {
  let amount = 0;
  for (let i = 0; i < order.lines.length; i++) {
    const line = order.lines[i];
    amount += line.quantity * line.unitPrice;
  }
  return amount;
}

function discount(amount, coupon, loyal) {
  if (coupon == null) {
    return 0;
  }
  let rate = coupon === "SAVE10" ? 0.1 : 0.05;
  if (loyal && amount > 100) {
    rate += 0.05;
  }
  return Math.round(amount * rate * 100) / 100;
}

function validate(order) {
  const problems = [];
  if (order.lines.length > MAX_LINES) {
    problems.push("too many lines");
  }
  order.lines.forEach((line, index) => {
    if (line.quantity <= 0 || line.unitPrice < 0) {
      problems.push(`line ${index}: bad quantity or price`);
    }
  });
  return problems;
}

function batches(orders, size) {
  const out = [];
  for (let start = 0; start < orders.length; start += size) {
    out.push(orders.slice(start, start + size));
  }
  return out;
}

function customerName(order) {
  const name = order.customer?.name;
  if (!name) {
    return "unknown";
  }
  return name.trim();
}

async function findOrder(db, orderId) {
  const result = await db.query("SELECT * FROM orders WHERE id = $1", [orderId]);
  if (result.rows.length === 0) {
    return null;
  }
  return result.rows[0];
}

async function ordersFor(db, customer, status) {
  const result = await db.query("SELECT * FROM orders WHERE customer = $1 AND status = $2", [
    customer,
    status,
  ]);
  return result.rows;
}

async function charge(client, customer, amount) {
  for (let attempt = 0; attempt < RETRIES; attempt++) {
    try {
      const receipt = await client.pay(customer, amount);
      return receipt;
    } catch (err) {
      console.warn(`payment failed for ${customer}: ${err.message}`);
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
  throw new Error(`could not charge ${customer}`);
}

async function checkout(db, client, orderId, loyal) {
  const order = await findOrder(db, orderId);
  if (order === null) {
    throw new Error(`no order ${orderId}`);
  }
  const problems = validate(order);
  if (problems.length > 0 && !order.force) {
    return { ok: false, problems };
  }
  const amount = subtotal(order) - discount(subtotal(order), order.coupon, loyal);
  const receipt = await charge(client, order.customer, amount);
  return { ok: true, receipt };
}

async function exportOrders(path, orders) {
  const handle = await fs.open(path, "w");
  try {
    for (const order of orders) {
      const line = `${order.id}\t${subtotal(order)}\n`;
      await handle.write(line);
    }
  } finally {
    await handle.close();
  }
  return orders.length;
}

function compress(directory, name, callback) {
  execFile("tar", ["-czf", name, directory], (error, stdout) => {
    if (error) {
      callback(error);
      return;
    }
    callback(null, stdout);
  });
}

module.exports = { subtotal, discount, validate, batches, customerName, checkout, exportOrders, compress, ordersFor };
