package httpguard_test

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// An operator holds a circuit open over HTTP: the admin handler checks the
// caller's token with an authorizer of the application's own.
func ExampleAdminHandler() {
	dir, _ := os.MkdirTemp("", "circuits")
	defer os.RemoveAll(dir)
	store, _ := filestore.Open(dir)
	b := circuit.New(store)
	_ = b.Run(context.Background(), "billing-api", circuit.DefaultPolicy, func(context.Context) (circuit.Outcome, error) {
		return circuit.Success, nil
	})

	token := "from-a-secret-store"
	checkOperator := func(r *http.Request) error {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			return errors.New("no operator token")
		}
		return nil
	}
	quiet := slog.New(slog.DiscardHandler)
	admin := http.NewServeMux()
	admin.Handle("/debug/circuits/admin", httpguard.AdminHandler(b, checkOperator, httpguard.WithLogger(quiet)))
	srv := httptest.NewServer(admin)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/debug/circuits/admin",
		strings.NewReader(`{"action":"open","circuit":"billing-api","for":"15m"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var ans httpguard.AdminResponse
	_ = json.NewDecoder(resp.Body).Decode(&ans)
	fmt.Println(resp.StatusCode, ans.Action, ans.Circuit.Name, ans.Circuit.State, "forced:", ans.Circuit.Forced)
	// Output: 200 open billing-api open forced: true
}
