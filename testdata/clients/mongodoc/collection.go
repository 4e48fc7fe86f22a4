// Package mongodoc guards the part of a MongoDB collection this package
// calls. FindOne returns the driver's own *mongo.SingleResult, a concrete
// type that reports its error with Err() and that the driver's
// mongo.NewSingleResultFromDocument makes from an error: the wrapper
// settles the call through Err, and a rejection is a result made by that
// constructor.
package mongodoc

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

//go:generate go tool circuitgen

// Collection is the part of *mongo.Collection this package calls.
//
//circuitgen:guard circuit=mongo threshold=3 cooldown=1m errors=go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology.ServerSelectionError
type Collection interface {
	FindOne(ctx context.Context, filter any, opts ...options.Lister[options.FindOneOptions]) *mongo.SingleResult
}

var _ Collection = (*mongo.Collection)(nil)
