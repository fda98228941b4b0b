// Package store keeps stock levels and orders in a SQL database.
package store

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNotFound is returned when an item does not exist.
var ErrNotFound = errors.New("not found")

const lowStock = 5

// Item is one stock keeping unit.
type Item struct {
	SKU      string
	Name     string
	Price    float64
	Quantity int
}

// Store wraps the database.
type Store struct {
	db *sql.DB
}

// Find returns the item with the given SKU.
func (s *Store) Find(sku string) (*Item, error) {
	row := s.db.QueryRow("SELECT sku, name, price, quantity FROM items WHERE sku = $1", sku)
	item := &Item{}
	if err := row.Scan(&item.SKU, &item.Name, &item.Price, &item.Quantity); err != nil {
		return nil, err
	}
	return item, nil
}

// Reserve takes count units of an item out of stock.
func (s *Store) Reserve(sku string, count int) error {
	item, err := s.Find(sku)
	if err != nil {
		return err
	}
	if item == nil {
		return ErrNotFound
	}
	if count <= 0 || item.Quantity < count {
		return fmt.Errorf("cannot reserve %d of %s", count, sku)
	}
	_, err = s.db.Exec("UPDATE items SET quantity = $1 WHERE sku = $2", item.Quantity-count, sku)
	return err
}

// TotalValue is the value of everything in stock.
func TotalValue(items []Item) float64 {
	total := 0.0
	for i := 0; i < len(items); i++ {
		item := items[i]
		total += item.Price * float64(item.Quantity)
	}
	return total
}

// LowStock lists the SKUs whose quantity is between minimum and threshold.
func LowStock(items []Item, threshold int, minimum int) []string {
	var low []string
	for _, item := range items {
		if item.Quantity < threshold && item.Quantity >= minimum {
			low = append(low, item.SKU)
		}
	}
	return low
}

// Page returns one page of items.
func Page(items []Item, start int, size int) []Item {
	end := start + size
	if start < 0 || end > len(items) {
		return nil
	}
	return items[start:end]
}

// Named finds the first item whose name has the prefix.
func Named(items []*Item, prefix string) *Item {
	for _, item := range items {
		if item == nil {
			continue
		}
		if strings.HasPrefix(item.Name, prefix) {
			return item
		}
	}
	return nil
}

// LoadSKUs reads one SKU per line, skipping comments.
func LoadSKUs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var skus []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		skus = append(skus, line)
	}
	return skus, scanner.Err()
}

// Search returns at most limit items whose name matches.
func (s *Store) Search(name string, limit int) ([]Item, error) {
	rows, err := s.db.Query("SELECT sku, name, price, quantity FROM items WHERE name LIKE $1", name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []Item
	for rows.Next() {
		if len(found) >= limit {
			break
		}
		var item Item
		if err := rows.Scan(&item.SKU, &item.Name, &item.Price, &item.Quantity); err != nil {
			return nil, err
		}
		found = append(found, item)
	}
	return found, nil
}

// Archive packs a directory into a tarball.
func Archive(dir string, name string) error {
	out, err := exec.Command("tar", "-czf", name, dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tar failed: %s: %w", out, err)
	}
	return nil
}
