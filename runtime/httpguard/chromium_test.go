package httpguard_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// chromium returns the path of Debian's chromium. Without it the test is
// skipped, except in CI (CI=true), where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, fmt.Sprintf("chromium is not installed (apt-get install -y chromium): %v", err))
	}
	return path
}

// runChromium runs headless chromium with args against url and returns
// its standard output.
func runChromium(t *testing.T, bin, url string, args ...string) []byte {
	t.Helper()
	profile, err := os.MkdirTemp("", "circuitgen-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "HOME="+profile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr[^>]*data-circuit="([^"]+)"[^>]*>(.*?)</tr>`)
	tagRE  = regexp.MustCompile(`<[^>]+>`)
	sumRE  = regexp.MustCompile(`(?s)<p id="summary">(.*?)</p>`)
	spaces = regexp.MustCompile(`\s+`)
)

// visible is the text a person reads in an HTML fragment.
func visible(fragment string) string {
	s := tagRE.ReplaceAllString(fragment, " ")
	s = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'").Replace(s)
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

func TestStatusPageInChromium(t *testing.T) {
	bin := chromium(t)
	f := newFixture(t)
	// The application names its circuits and adds what the store lists: the
	// corrupt record shows as a row, and among the records the listing
	// could not read.
	named := population(t, f)
	srv := httptest.NewServer(httpguard.StatusHandlerFunc(f.b, func(ctx context.Context) ([]string, error) {
		names, err := f.store.Names(ctx)
		return append(names, named...), err
	}, httpguard.WithLogger(slog.New(slog.DiscardHandler))))
	defer srv.Close()

	dom := string(runChromium(t, bin, srv.URL+"/debug/circuits", "--dump-dom"))
	if !strings.Contains(dom, `http-equiv="refresh" content="5"`) {
		t.Error("the page does not refresh itself")
	}
	if strings.Contains(dom, "<script") {
		t.Error("the page has a script")
	}
	if m := sumRE.FindStringSubmatch(dom); m == nil || visible(m[1]) != "7 circuits: 1 forced open, 1 open, 2 half-open, 1 error, 1 closed, 1 never seen; 1 record could not be read" {
		t.Errorf("summary = %q", m)
	}
	// What a person reads in each row: name, state, then the numbers. The
	// records were written ten seconds before the page is rendered: their
	// times read as past ("ago"), their deadlines as less than whole
	// minutes away ("in 59m…"), however fast Chromium renders.
	wants := map[string][]string{
		"billing-api":            {"billing-api Closed 2 — — 1 ", " ago"},
		"email-svc":              {"email-svc Half-open probe in flight 1 ", " UTC in 59m", " ago"},
		"inventory":              {"inventory Half-open ready to probe: the next call is the probe 1 ", " ago — 1 "},
		"ledger":                 {"ledger Error corrupt record — — — — —"},
		"payment-gateway:refund": {"payment-gateway:refund Open 3 ", " UTC in 9m", "— 1 "},
		"refunds":                {"refunds Forced open held open by an operator; circuitctl clear ends it 0 ", " UTC in 59m", "— 1 "},
		"search":                 {"search Never seen no record in the store 0 — — 0 —"},
	}
	rows := rowRE.FindAllStringSubmatch(dom, -1)
	var order []string
	for _, r := range rows {
		name, text := r[1], visible(r[2])
		order = append(order, name)
		for _, w := range wants[name] {
			if !strings.Contains(text, w) {
				t.Errorf("row %s reads %q; want it to contain %q", name, text, w)
			}
		}
		if !strings.Contains(r[0], `class="state-`) {
			t.Errorf("row %s has no state class", name)
		}
	}
	if got := strings.Join(order, " "); got != "billing-api email-svc inventory ledger payment-gateway:refund refunds search" {
		t.Errorf("rows = %s", got)
	}
	if m := regexp.MustCompile(`(?s)<section id="unreadable">(.*?)</section>`).FindStringSubmatch(dom); m == nil ||
		!strings.Contains(visible(m[1]), "Records that could not be read corrupt record") {
		t.Errorf("the page does not list the record the store could not read: %q", m)
	}
	for _, s := range []string{`<caption>`, `<th scope="col">State</th>`, `<th scope="row">`, `<html lang="en">`} {
		if !strings.Contains(dom, s) {
			t.Errorf("the page lacks %s", s)
		}
	}

	dir := os.Getenv("CIRCUITGEN_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "status-page.png")
	_ = os.Remove(shot)
	runChromium(t, bin, srv.URL+"/debug/circuits", "--screenshot="+shot, "--window-size=1200,900", "--hide-scrollbars")
	checkScreenshot(t, shot)
	t.Logf("screenshot: %s", shot)
}

// checkScreenshot verifies the PNG is 1200x900 and shows each state's
// badge colour.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer file.Close()
	img, err := png.Decode(file)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %v, want 1200x900", b)
	}
	badges := map[string]color.RGBA{
		"closed": {0xda, 0xfb, 0xe1, 0xff}, "open": {0xff, 0xeb, 0xe9, 0xff},
		"half_open": {0xff, 0xf1, 0xc5, 0xff}, "error": {0xef, 0xe6, 0xff, 0xff},
		"forced": {0xcf, 0x22, 0x2e, 0xff}, "never seen": {0xea, 0xee, 0xf2, 0xff},
	}
	for state, c := range badges {
		if n := countColour(img, c); n < 50 {
			t.Errorf("the screenshot shows %d pixels of the %s badge colour %v", n, state, c)
		}
	}
}

func countColour(img image.Image, want color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, want.R) && near(g, want.G) && near(bl, want.B) {
				n++
			}
		}
	}
	return n
}

func near(v uint32, w uint8) bool {
	d := int(v>>8) - int(w)
	return d >= -2 && d <= 2
}
