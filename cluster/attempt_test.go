package cluster

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestRetryAcrossRestart: object store Puts in flight while the server
// restarts all complete, because an attempt whose reply was lost with the
// old connection is abandoned at the reconnection instead of waiting for
// its deadline (here the whole 20 s budget: such a Put fails).
func TestRetryAcrossRestart(t *testing.T) {
	n := startNATS(t)
	nc := n.connect(t)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	rc := watchReconnects(nc, stop)
	var done atomic.Int64
	var fails atomic.Int64
	var wg sync.WaitGroup
	var maxd atomic.Int64
	for g := 0; g < 30; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				start := time.Now()
				c, cancel := context.WithTimeout(ctx, 20*time.Second)
				err := rc.retry(c, 20*time.Second, func(c context.Context) error {
					_, err := obs.Put(c, jetstream.ObjectMeta{Name: fmt.Sprintf("o%d", g)}, bytes.NewReader([]byte("hello world")))
					return err
				})
				cancel()
				d := time.Since(start)
				if int64(d) > maxd.Load() {
					maxd.Store(int64(d))
				}
				if err != nil {
					fails.Add(1)
					t.Errorf("put %d/%d after %v: %v", g, i, d, err)
				}
				done.Add(1)
			}
		}()
	}
	for done.Load() < 200 {
		time.Sleep(time.Millisecond)
	}
	n.restart()
	wg.Wait()
	t.Logf("%d failed, longest Put %v", fails.Load(), time.Duration(maxd.Load()))
}
