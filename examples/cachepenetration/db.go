package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync/atomic"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// user is one row of the users table.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// userDB is the database behind the cache: a SQLite file with one table.
// Every statement that reaches SQLite is counted, which is the figure the
// filter is meant to reduce: lookups (SELECT by id) in lookups, inserts and
// deletes in writes.
type userDB struct {
	db      *sql.DB
	lookup  *sql.Stmt
	lookups atomic.Int64
	writes  atomic.Int64
}

const schema = `CREATE TABLE users (
	id    INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: a deleted id is never given out again
	name  TEXT NOT NULL,
	email TEXT NOT NULL
)`

// openDB creates the database file users.db in dir. WAL lets the HTTP
// handlers' lookups run in parallel with each other and with one writer;
// busy_timeout makes a writer that finds the database locked wait instead of
// failing.
func openDB(ctx context.Context, dir string) (*userDB, error) {
	dsn := "file:" + filepath.ToSlash(filepath.Join(dir, "users.db")) + "?" + url.Values{
		"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(NORMAL)"},
	}.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("create table: %w", err)
	}
	lookup, err := db.PrepareContext(ctx, `SELECT id, name, email FROM users WHERE id = ?`)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &userDB{db: db, lookup: lookup}, nil
}

func (d *userDB) Close() error {
	d.lookup.Close()
	return d.db.Close()
}

// seed inserts n users, ids 1..n, in one transaction. It is not counted: it
// is the data the service starts with.
func (d *userDB) seed(ctx context.Context, n int) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit
	ins, err := tx.PrepareContext(ctx, `INSERT INTO users (name, email) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for i := 1; i <= n; i++ {
		if _, err := ins.ExecContext(ctx, fmt.Sprintf("user %d", i), fmt.Sprintf("user%d@example.com", i)); err != nil {
			return fmt.Errorf("seed row %d: %w", i, err)
		}
	}
	return tx.Commit()
}

// get returns the user with the given id; ok is false if there is none.
// It is the one counted lookup of the service.
func (d *userDB) get(ctx context.Context, id int64) (u user, ok bool, err error) {
	d.lookups.Add(1)
	err = d.lookup.QueryRowContext(ctx, id).Scan(&u.ID, &u.Name, &u.Email)
	if errors.Is(err, sql.ErrNoRows) {
		return user{}, false, nil
	}
	return u, err == nil, err
}

// create inserts a user and returns it with its new id.
func (d *userDB) create(ctx context.Context, name, email string) (user, error) {
	d.writes.Add(1)
	var id int64
	err := d.db.QueryRowContext(ctx, `INSERT INTO users (name, email) VALUES (?, ?) RETURNING id`, name, email).Scan(&id)
	if err != nil {
		return user{}, err
	}
	return user{ID: id, Name: name, Email: email}, nil
}

// remove deletes the user with the given id and reports whether there was one.
func (d *userDB) remove(ctx context.Context, id int64) (bool, error) {
	d.writes.Add(1)
	res, err := d.db.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// eachID calls fn with every user id, in id order; the filter is built from
// it at startup, the database being the source of truth.
func (d *userDB) eachID(ctx context.Context, fn func(id int64) error) error {
	rows, err := d.db.QueryContext(ctx, `SELECT id FROM users ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	return rows.Err()
}
