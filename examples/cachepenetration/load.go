package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// absentBase is where the ids of requests for users that do not exist start:
// ids that an attacker, a scraper or a client with stale links makes up,
// drawn uniformly from [absentBase, absentBase+absentSpan), almost all of
// them different. The seeded ids are far below it.
const (
	absentBase = 1_000_000_000
	absentSpan = 1_000_000_000_000
)

// request is one request of a load, with the status its answer must have.
type request struct {
	method string
	id     int64
	want   int
}

// workload is the GET requests of a run: fraction absent of them for ids that
// do not exist, the rest for seeded users, hotShare of those for the hot
// users (ids 1..hot, the popular profiles a cache is for) and the others
// uniform over all users.
type workload struct {
	gets     []request
	absent   []int64 // the ids of the requests for absent users, in order
	existing int     // requests for users that exist
}

func makeWorkload(seed uint64, users, n, hot int, absent, hotShare float64) workload {
	rng := rand.New(rand.NewPCG(seed, 0x63756b6f6f))
	var w workload
	w.gets = make([]request, n)
	for i := range w.gets {
		switch {
		case rng.Float64() < absent:
			id := absentBase + rng.Int64N(absentSpan)
			w.gets[i] = request{http.MethodGet, id, http.StatusNotFound}
			w.absent = append(w.absent, id)
		case rng.Float64() < hotShare:
			w.gets[i] = request{http.MethodGet, 1 + rng.Int64N(int64(hot)), http.StatusOK}
			w.existing++
		default:
			w.gets[i] = request{http.MethodGet, 1 + rng.Int64N(int64(users)), http.StatusOK}
			w.existing++
		}
	}
	return w
}

// loadResult is what the client side of a load saw.
type loadResult struct {
	sent       int
	ok         int // 200 with the right user, or 204
	notFound   int
	unexpected int    // answers whose status or body is not the one wanted
	example    string // the first unexpected answer
	elapsed    time.Duration
}

// drive sends reqs to the service at base from workers goroutines, as fast as
// it answers, and checks every answer: a 200 must carry the requested user.
func drive(ctx context.Context, client *http.Client, base string, reqs []request, workers int) (loadResult, error) {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		res      = loadResult{sent: len(reqs)}
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			var ok, notFound, unexpected int
			example := ""
			var err error
			for {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) || ctx.Err() != nil {
					break
				}
				var problem string
				var status int
				status, problem, err = send(ctx, client, base, reqs[i])
				if err != nil {
					break
				}
				switch {
				case problem != "":
					unexpected++
					if example == "" {
						example = problem
					}
				case status == http.StatusNotFound:
					notFound++
				default:
					ok++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			res.ok += ok
			res.notFound += notFound
			res.unexpected += unexpected
			if res.example == "" {
				res.example = example
			}
			if firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return res, firstErr
}

// send makes one request and returns its status, and a description of what
// is wrong with the answer if it is not the one wanted.
func send(ctx context.Context, client *http.Client, base string, rq request) (status int, problem string, err error) {
	req, err := http.NewRequestWithContext(ctx, rq.method, base+"/users/"+strconv.FormatInt(rq.id, 10), nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	if resp.StatusCode != rq.want {
		return resp.StatusCode, fmt.Sprintf("%s /users/%d: %d, want %d", rq.method, rq.id, resp.StatusCode, rq.want), nil
	}
	if resp.StatusCode == http.StatusOK {
		var u user
		if err := json.Unmarshal(body, &u); err != nil || u.ID != rq.id {
			return resp.StatusCode, fmt.Sprintf("%s /users/%d: body %q", rq.method, rq.id, body), nil
		}
	}
	return resp.StatusCode, "", nil
}
