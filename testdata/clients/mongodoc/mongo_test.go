package mongodoc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/testdata/clients/gone"
)

// gets answers FindOne with results the driver's constructor makes.
type gets struct{ err error }

func (g gets) FindOne(context.Context, any, ...options.Lister[options.FindOneOptions]) *mongo.SingleResult {
	return mongo.NewSingleResultFromDocument(bson.D{{Key: "n", Value: 1}}, g.err, nil)
}

// TestFindOneAgainstTheDriver drives the guarded collection's FindOne,
// whose *mongo.SingleResult reports the call's error with Err, through
// the real driver: a server that went away opens the circuit, a missing
// document is no failure, and a rejected FindOne returns a SingleResult
// whose Err and Decode are the *circuit.OpenError.
func TestFindOneAgainstTheDriver(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()

	found := NewGuardedCollection(gets{}, kit.Breaker)
	var doc struct{ N int }
	if err := found.FindOne(ctx, bson.D{}).Decode(&doc); err != nil || doc.N != 1 {
		t.Fatalf("FindOne.Decode = %+v, %v; want n 1", doc, err)
	}
	none := NewGuardedCollection(gets{err: mongo.ErrNoDocuments}, kit.Breaker)
	for range 5 {
		if err := none.FindOne(ctx, bson.D{}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
			t.Fatalf("FindOne of no document: %v, want mongo.ErrNoDocuments", err)
		}
	}

	dead := gone.Start(t)
	uri := fmt.Sprintf("mongodb://%s/?directConnection=true&serverSelectionTimeoutMS=200&connectTimeoutMS=200", dead.Addr())
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	coll := NewGuardedCollection(client.Database("db").Collection("docs"), kit.Breaker)
	for i := range 3 {
		err := coll.FindOne(ctx, bson.D{}).Err()
		var sel topology.ServerSelectionError
		if !errors.As(err, &sel) {
			t.Fatalf("FindOne %d on a server that went away: %v, want a topology.ServerSelectionError", i, err)
		}
	}
	s, err := kit.Breaker.Snapshot(ctx, "mongo")
	if err != nil {
		t.Fatal(err)
	}
	if s.State != circuit.StateOpen {
		t.Fatalf("after 3 failed selections: %+v, want open", s)
	}
	res := coll.FindOne(ctx, bson.D{})
	var open *circuit.OpenError
	if err := res.Err(); !errors.As(err, &open) || open.Name != "mongo" {
		t.Fatalf("FindOne on the open circuit: Err = %v, want the *circuit.OpenError of mongo", err)
	}
	if err := res.Decode(&doc); !errors.As(err, &open) {
		t.Errorf("FindOne on the open circuit: Decode = %v, want the *circuit.OpenError", err)
	}
}
