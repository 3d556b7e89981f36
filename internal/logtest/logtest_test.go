package logtest

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Concurrent writers lose no line and a reader may look meanwhile (run
// with -race to see the lock do its work).
func TestBufferTakesConcurrentWriters(t *testing.T) {
	var logs Buffer
	log := logs.Logger(slog.LevelInfo)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Info("hello", "writer", i)
			_ = logs.String()
		}()
	}
	wg.Wait()
	if n := strings.Count(logs.String(), "msg=hello"); n != 8 {
		t.Errorf("%d lines, want 8:\n%s", n, logs.String())
	}
}

func TestLoggerKeepsItsLevel(t *testing.T) {
	var logs Buffer
	log := logs.Logger(slog.LevelWarn)
	log.Info("quiet")
	log.Warn("loud")
	if out := logs.String(); strings.Contains(out, "quiet") || !strings.Contains(out, "level=WARN msg=loud") {
		t.Errorf("a warn-level logger wrote:\n%s", out)
	}
}
