package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/lockfree"
)

// service is the HTTP API over the users table:
//
//	GET    /users/{id}   200 and the user as JSON, or 404
//	DELETE /users/{id}   204, or 404
//	POST   /users        201 and the new user; the body is {"name": ..., "email": ...}
//
// A GET asks, in order: the filter of existing ids (if there is one), the
// cache, the database. The filter answers "certainly absent" for an id that
// was never inserted or has been deleted, so such a request ends there with a
// 404 and costs neither a cache slot nor a query; an id it may contain goes on
// to the cache and the database, which has the last word.
//
// The filter holds exactly the ids in the table, which is why it must support
// deletion: a Bloom filter would go on answering "maybe" for every deleted id,
// sending its requests to the database forever, until rebuilt.
type service struct {
	db     *userDB
	cache  *lru
	filter *lockfree.Filter // nil: no filter, every cache miss queries the database
	log    *slog.Logger

	// filterOff is set if the filter failed to take a new id (ErrFull). The
	// filter then no longer holds every id, so its "absent" cannot be
	// trusted, and every request goes to the cache and the database, as
	// with no filter, until the service is rebuilt with a larger one.
	filterOff atomic.Bool

	gets           atomic.Int64
	filterRejected atomic.Int64 // GETs answered 404 by the filter alone
	cacheHits      atomic.Int64
}

func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", s.getUser)
	mux.HandleFunc("DELETE /users/{id}", s.deleteUser)
	mux.HandleFunc("POST /users", s.createUser)
	return mux
}

// mayExist is the filter's answer for id: false means certainly absent.
func (s *service) mayExist(id int64) bool {
	if s.filter == nil || s.filterOff.Load() {
		return true
	}
	k := idKey(id)
	return s.filter.Contains(k[:])
}

func (s *service) getUser(w http.ResponseWriter, r *http.Request) {
	s.gets.Add(1)
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if !s.mayExist(id) {
		s.filterRejected.Add(1)
		http.NotFound(w, r)
		return
	}
	if u, ok := s.cache.get(id); ok {
		s.cacheHits.Add(1)
		writeJSON(w, http.StatusOK, u)
		return
	}
	u, found, err := s.db.get(r.Context(), id)
	if err != nil {
		s.fail(w, "get", id, err)
		return
	}
	if !found {
		// With a filter, a false positive (or a delete that ran since the
		// filter was asked).
		http.NotFound(w, r)
		return
	}
	// A DELETE may have removed the row since it was read, and this put then
	// caches a deleted user. The filter, asked before the cache, hides it:
	// the delete removed the id from the filter too.
	s.cache.put(u)
	writeJSON(w, http.StatusOK, u)
}

func (s *service) deleteUser(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if !s.mayExist(id) {
		http.NotFound(w, r)
		return
	}
	deleted, err := s.db.remove(r.Context(), id)
	if err != nil {
		s.fail(w, "delete", id, err)
		return
	}
	if !deleted {
		http.NotFound(w, r)
		return
	}
	s.cache.remove(id)
	if s.filter != nil {
		// Only the request whose DELETE removed the row gets here, so the
		// id's fingerprint is removed once, as it was inserted once. A
		// filter must never be asked to delete a key it does not hold: it
		// could remove another id's fingerprint.
		k := idKey(id)
		s.filter.Delete(k[:])
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *service) createUser(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.Name == "" {
		http.Error(w, "want a JSON body with a name", http.StatusBadRequest)
		return
	}
	u, err := s.db.create(r.Context(), in.Name, in.Email)
	if err != nil {
		s.fail(w, "create", 0, err)
		return
	}
	// The row is committed before its id enters the filter: a GET that runs
	// in between gets a 404, as it would had it run before the POST. The
	// POST answers after both, so every GET that follows finds the user.
	if s.filter != nil {
		k := idKey(u.ID)
		if err := s.filter.Insert(k[:]); err != nil {
			s.filterOff.Store(true)
			s.log.Error("filter full: answering every request from the cache and the database", "id", u.ID, "err", err)
		}
	}
	writeJSON(w, http.StatusCreated, u)
}

// pathID parses the {id} of the path, answering 400 if it is not an integer.
func pathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "the id must be an integer", http.StatusBadRequest)
		return 0, false
	}
	return id, true
}

func (s *service) fail(w http.ResponseWriter, op string, id int64, err error) {
	s.log.Error("database", "op", op, "id", id, "err", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
