package server

import (
	"net/http"
	"time"
)

// Metrics is filled in by metrics_prom.go.
type Metrics struct{}

// NewMetrics returns the server's Prometheus metrics.
func NewMetrics() *Metrics { return &Metrics{} }

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler { return http.NotFoundHandler() }

func (m *Metrics) observeFsync(time.Duration)           {}
func (m *Metrics) observeCommand(string, time.Duration) {}
func (m *Metrics) attach(*Server)                       {}
