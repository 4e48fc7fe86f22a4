package storeurl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/redis/go-redis/v9"
)

// openRedis opens redis://, rediss:// or unix:// in go-redis's URL syntax,
// with the key prefix in the query parameter prefix and local copies
// unless cache=off. Context deadlines bound every round trip.
func openRedis(ctx context.Context, u *url.URL) (Store, error) {
	q := u.Query()
	prefix := redisstore.DefaultPrefix
	if q.Has("prefix") {
		prefix = q.Get("prefix")
		q.Del("prefix")
	}
	cached, err := cacheParam(q)
	if err != nil {
		return nil, err
	}
	v := *u
	v.RawQuery = q.Encode()
	opt, err := redis.ParseURL(v.String())
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	opt.ContextTimeoutEnabled = true
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	opts := []redisstore.Option{redisstore.WithPrefix(prefix), redisstore.WithOwnedClient()}
	if cached {
		opts = append(opts, redisstore.WithCopies(0))
	}
	rs, err := redisstore.New(ctx, c, opts...)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return rs, nil
}
