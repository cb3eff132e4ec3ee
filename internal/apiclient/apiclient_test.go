package apiclient

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// A dialed connection is closed by Close; a lent one is left to its owner.
func TestCloseOnlyWhatDialMade(t *testing.T) {
	c, err := Dial("passthrough:///127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil || c.owned.(*grpc.ClientConn).GetState() != connectivity.Shutdown {
		t.Fatalf("dialed connection after Close: %v %v", err, c.owned.(*grpc.ClientConn).GetState())
	}
	lent, err := grpc.NewClient("passthrough:///127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer lent.Close()
	if err := Wrap(lent).Close(); err != nil || lent.GetState() == connectivity.Shutdown {
		t.Fatalf("lent connection closed by Close: %v %v", err, lent.GetState())
	}
	if err := (*Conn)(nil).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial("\x00bad"); err == nil {
		t.Fatal("a bad target dialed")
	}
}
