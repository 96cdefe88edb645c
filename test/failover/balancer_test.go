package failover

import (
	"io"
	"net"
	"sync"
	"time"
)

// balancer is a TCP load balancer in front of the replicas' webhook servers, standing in for
// the chart's Service: each new connection goes to the next backend in turn (TLS passes
// through). A backend that refuses the connection is skipped, as the Service drops the
// endpoint of a pod that is gone (the real endpoint removal takes longer: readiness probes and
// kube-proxy; here it is immediate).
type balancer struct {
	ln net.Listener

	mu       sync.Mutex
	backends []string
	next     int
	delay    time.Duration
	conns    map[net.Conn]struct{}
	accepted map[string]int
}

// startBalancer listens on addr and serves until Close.
func startBalancer(addr string) (*balancer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := &balancer{ln: ln, conns: map[net.Conn]struct{}{}, accepted: map[string]int{}}
	go b.serve()
	return b, nil
}

// Close stops listening and drops every connection.
func (b *balancer) Close() {
	_ = b.ln.Close()
	b.dropConnections()
}

// setBackends replaces the backend addresses (none: every connection is refused).
func (b *balancer) setBackends(addrs ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = addrs
}

// setDelay holds every chunk of bytes from kube-apiserver to a backend for d: a slow network
// that makes each admission call, and so each create, take at least d.
func (b *balancer) setDelay(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delay = d
}

// dropConnections closes every proxied connection, so that kube-apiserver dials again (and
// reaches the next backend) for its next admission call instead of reusing a kept-alive one.
func (b *balancer) dropConnections() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.conns {
		_ = c.Close()
	}
}

func (b *balancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.handle(c)
	}
}

func (b *balancer) handle(client net.Conn) {
	backend, addr := b.dial()
	if backend == nil {
		_ = client.Close()
		return
	}
	b.mu.Lock()
	b.conns[client], b.conns[backend] = struct{}{}, struct{}{}
	b.accepted[addr]++
	delay := b.delay
	b.mu.Unlock()
	done := make(chan struct{}, 2)
	go pipe(backend, client, delay, done)
	go pipe(client, backend, 0, done)
	<-done // one side ended: end both
	_ = client.Close()
	_ = backend.Close()
	<-done
	b.mu.Lock()
	delete(b.conns, client)
	delete(b.conns, backend)
	b.mu.Unlock()
}

// dial connects to the next backend that accepts, trying each once.
func (b *balancer) dial() (net.Conn, string) {
	b.mu.Lock()
	backends, start := append([]string(nil), b.backends...), b.next
	b.next++
	b.mu.Unlock()
	for i := range backends {
		addr := backends[(start+i)%len(backends)]
		if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
			return c, addr
		}
	}
	return nil, ""
}

// pipe copies src to dst, holding each chunk for delay.
func pipe(dst, src net.Conn, delay time.Duration, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	if delay == 0 {
		_, _ = io.Copy(dst, src)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(delay)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// connections returns how many connections each backend has accepted so far.
func (b *balancer) connections() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.accepted))
	for k, v := range b.accepted {
		out[k] = v
	}
	return out
}
