package wan

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer echoes every connection until it closes.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func TestRelayDelayAndBytes(t *testing.T) {
	dst := echoServer(t)
	r, err := Listen("127.0.0.1:0", Link{Delay: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	began := time.Now()
	c, err := Dialer(r.Addr())(context.Background(), "tcp", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d := time.Since(began); d < 40*time.Millisecond {
		t.Errorf("connect took %v, want >= one round trip (40ms)", d)
	}
	msg := make([]byte, 1000)
	rand.Read(msg)
	for range 3 {
		began = time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		rtt := time.Since(began)
		if !bytes.Equal(got, msg) {
			t.Fatal("echo differs")
		}
		if rtt < 40*time.Millisecond || rtt > 200*time.Millisecond {
			t.Errorf("round trip %v, want about 40ms", rtt)
		}
	}
	// The relay counts a chunk after its write returns, which may be after the reader saw it.
	st := r.Stats()
	for i := 0; i < 100 && st.Backward < 3000; i++ {
		time.Sleep(10 * time.Millisecond)
		st = r.Stats()
	}
	if st.Conns != 1 || st.Forward != 3000 || st.Backward != 3000 {
		t.Errorf("stats %+v", st)
	}
}

func TestRelayRateIsShared(t *testing.T) {
	dst := echoServer(t)
	const rate = 4 << 20 // 4 MiB/s each way
	r, err := Listen("127.0.0.1:0", Link{Rate: rate}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const conns, each = 4, 512 << 10
	began := time.Now()
	done := make(chan error, conns)
	for range conns {
		go func() {
			c, err := Dialer(r.Addr())(context.Background(), "tcp", dst)
			if err != nil {
				done <- err
				return
			}
			defer c.Close()
			go c.Write(make([]byte, each))
			_, err = io.ReadFull(c, make([]byte, each))
			done <- err
		}()
	}
	for range conns {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	el := time.Since(began).Seconds()
	want := float64(conns*each) / rate // 0.5 s
	if el < want*0.9 || el > want*2.5 {
		t.Errorf("%d x %d bytes took %.2fs, want about %.2fs at the shared cap", conns, each, el, want)
	}
}

func TestRelayLocalPassThrough(t *testing.T) {
	dst := echoServer(t)
	r, err := Listen("127.0.0.1:0", Link{Delay: time.Second}, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	began := time.Now()
	c, err := Dialer(r.Addr())(context.Background(), "tcp", dst)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hi"))
	io.ReadFull(c, make([]byte, 2))
	c.Close()
	if d := time.Since(began); d > 500*time.Millisecond {
		t.Errorf("local destination delayed %v", d)
	}
}

func TestForward(t *testing.T) {
	dst := echoServer(t)
	r, err := Listen("127.0.0.1:0", Link{Delay: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr, err := r.Forward("127.0.0.2:0", dst)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	began := time.Now()
	c.Write([]byte("ping"))
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo %q %v", got, err)
	}
	// connect round trip (40ms, once the relay accepts) + one round trip of data.
	if d := time.Since(began); d < 80*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("first echo took %v, want about 80ms", d)
	}
}
