package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// gobreakerStore is sony/gobreaker/v2's SharedDataStore over go-redis, for
// comparison: the state is a JSON string, guarded by a SET NX PX lock with
// a random value, released by a compare-and-delete script, as gobreaker's
// own Redis store (redsync) does.
type gobreakerStore struct {
	c      *redis.Client
	mu     sync.Mutex
	tokens map[string]string
}

// lockExpiry is redsync's default lock expiry.
const lockExpiry = 8 * time.Second

var errLocked = errors.New("gobreaker lock is held")

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func newGobreakerStore(c *redis.Client) *gobreakerStore {
	return &gobreakerStore{c: c, tokens: map[string]string{}}
}

func (s *gobreakerStore) Lock(name string) error {
	token := lockToken()
	ok, err := s.c.SetNX(context.Background(), name, token, lockExpiry).Result()
	if err != nil {
		return err
	}
	if !ok {
		return errLocked
	}
	s.mu.Lock()
	s.tokens[name] = token
	s.mu.Unlock()
	return nil
}

func (s *gobreakerStore) Unlock(name string) error {
	s.mu.Lock()
	token := s.tokens[name]
	delete(s.tokens, name)
	s.mu.Unlock()
	return unlockScript.Run(context.Background(), s.c, []string{name}, token).Err()
}

func (s *gobreakerStore) GetData(name string) ([]byte, error) {
	b, err := s.c.Get(context.Background(), name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

func (s *gobreakerStore) SetData(name string, data []byte) error {
	return s.c.Set(context.Background(), name, data, 0).Err()
}

// lockToken returns 16 random bytes as 32 hex digits, a lock's value.
func lockToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
