package storeurl

import (
	"fmt"
	"net/url"
)

// cacheParam reads and removes the query parameter cache: on (the default)
// or off.
func cacheParam(q url.Values) (bool, error) {
	if !q.Has("cache") {
		return true, nil
	}
	v := q.Get("cache")
	q.Del("cache")
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("cache=%q: want on or off", v)
}
