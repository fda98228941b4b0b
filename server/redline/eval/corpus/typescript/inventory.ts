// Inventory service: stock levels, reservations, reports.
import { promises as fs } from "fs";
import { execFileSync } from "child_process";

export interface Item {
  sku: string;
  name: string;
  price: number;
  quantity: number;
  tags?: string[];
}

export interface Db {
  query(sql: string, params: unknown[]): Promise<{ rows: Item[] }>;
}

const LOW_STOCK = 5;

export function totalValue(items: Item[]): number {
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    total += item.price * item.quantity;
  }
  return Math.round(total * 100) / 100;
}

export function lowStock(items: Item[], threshold: number, minimum: number): string[] {
  const low: string[] = [];
  for (const item of items) {
    if (item.quantity < threshold && item.quantity >= minimum) {
      low.push(item.sku);
    }
  }
  return low;
}

export function page(items: Item[], start: number, size: number): Item[] {
  const end = start + size;
  if (start < 0 || end > items.length) {
    return [];
  }
  return items.slice(start, end);
}

export function tagged(items: Item[], tag: string): Item[] {
  const matches: Item[] = [];
  for (const item of items) {
    if (!item.tags) {
      continue;
    }
    if (item.tags.includes(tag)) {
      matches.push(item);
    }
  }
  return matches;
}

export async function find(db: Db, sku: string): Promise<Item | null> {
  const result = await db.query("SELECT * FROM items WHERE sku = $1", [sku]);
  if (result.rows.length === 0) {
    return null;
  }
  return result.rows[0];
}

export async function reserve(db: Db, sku: string, count: number): Promise<boolean> {
  const item = await find(db, sku);
  if (item === null) {
    return false;
  }
  if (count <= 0 || item.quantity < count) {
    return false;
  }
  await db.query("UPDATE items SET quantity = quantity - $1 WHERE sku = $2", [count, sku]);
  return true;
}

export function label(item: Item | undefined): string {
  const name = item?.name ?? "unknown";
  return `${name} (${item?.sku})`;
}

export async function loadItems(path: string): Promise<Item[]> {
  let text: string;
  try {
    text = await fs.readFile(path, "utf-8");
  } catch (err) {
    throw new Error(`cannot read ${path}: ${err}`);
  }
  const records = JSON.parse(text) as Item[];
  const items: Item[] = [];
  for (const record of records) {
    if (record.sku == null) {
      continue;
    }
    items.push({ ...record, quantity: Math.max(record.quantity, 0) });
  }
  return items;
}

export async function writeReport(path: string, items: Item[]): Promise<number> {
  const handle = await fs.open(path, "w");
  try {
    for (const item of items) {
      const flag = item.quantity < LOW_STOCK ? "LOW" : "ok";
      await handle.write(`${item.sku}\t${item.quantity}\t${flag}\n`);
    }
  } finally {
    await handle.close();
  }
  return items.length;
}

export function archive(directory: string, name: string): string {
  const out = execFileSync("tar", ["-czf", name, directory], { encoding: "utf-8" });
  return out.trim();
}
