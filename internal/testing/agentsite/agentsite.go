/*
Copyright 2026 The browserfleet Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package agentsite serves a small multi-page web site on loopback for
// agent tests: sign in, go to a list, open an item, read a value. Every
// page is static but for the session, so that snapshots and screenshots of
// it are the same from run to run.
//
// Pages (all HTML, UTF-8):
//
//	/             home: a heading and a "Sign in" link to /login
//	/login        GET: a form (Username, Password, a "Sign in" button) that
//	              POSTs to /login. Right credentials set the session cookie
//	              and redirect (303) to /items; wrong ones answer 401 with
//	              the form again and "Wrong username or password."
//	/items        after sign-in: the heading "Items" and one link per item
//	              ("Green Lamp" → /items/2); before it, a redirect to /login
//	/items/<id>   after sign-in: the item's name as heading and
//	              "Price: <price>" (e.g. "Price: 42.50"); 404 for an unknown id
//	/logout       ends the session and redirects to /
//	/board        a page for coordinate actions, laid out at fixed
//	              positions (see Board): a "Reveal code" button that shows
//	              "Code: 7391" when clicked, and a card to drag onto a box,
//	              which then reads "Dropped". It needs no sign-in.
//
// The session is a random cookie ("agentsite_session") that the site
// checks against the sessions it issued.
package agentsite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Item is one entry of /items.
type Item struct {
	ID    string
	Name  string
	Price string
}

// Items are the site's items, in the order /items lists them.
var Items = []Item{
	{ID: "1", Name: "Blue Mug", Price: "12.00"},
	{ID: "2", Name: "Green Lamp", Price: "42.50"},
	{ID: "3", Name: "Red Chair", Price: "89.99"},
}

// Board is where /board places its elements in a 1280x800 viewport (CSS
// pixels, the page unscrolled): the centre of each.
var Board = struct {
	RevealButton, Card, DropBox struct{ X, Y float64 }
}{
	RevealButton: struct{ X, Y float64 }{180, 124},
	Card:         struct{ X, Y float64 }{140, 330},
	DropBox:      struct{ X, Y float64 }{560, 340},
}

// RevealedCode is what /board shows once its button is clicked.
const RevealedCode = "7391"

// SessionCookie is the name of the session cookie.
const SessionCookie = "agentsite_session"

// Options configure a Site.
type Options struct {
	// Username and Password are the credentials /login accepts. Username
	// defaults to "ada".
	Username string
	Password string
}

// Site is a running site.
type Site struct {
	// URL is the root, http://127.0.0.1:port (or the address of StartOn).
	URL string

	opts Options
	srv  *http.Server
	ln   net.Listener

	mu       sync.Mutex
	sessions map[string]bool
	logins   []bool
	visited  []string
}

// New starts a site on 127.0.0.1, closed when the test ends.
func New(t testing.TB, opts Options) *Site {
	t.Helper()
	s, err := StartOn("127.0.0.1:0", opts)
	if err != nil {
		t.Fatalf("agentsite: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartOn starts a site listening on address (host:port, port 0 picks a
// free one), for suites whose browsers may reach only some loopback
// addresses. Close stops it.
func StartOn(address string, opts Options) (*Site, error) {
	if opts.Username == "" {
		opts.Username = "ada"
	}
	if opts.Password == "" {
		return nil, errors.New("a password is required")
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", address)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", address, err)
	}
	s := &Site{URL: "http://" + ln.Addr().String(), opts: opts, ln: ln, sessions: make(map[string]bool)}
	s.srv = &http.Server{Handler: s.handler()}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the site.
func (s *Site) Close() { _ = s.srv.Close() }

// Logins returns the outcome of every sign-in attempt, oldest first.
func (s *Site) Logins() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.logins...)
}

// Visited returns the method and path of every request, oldest first, as
// "GET /items".
func (s *Site) Visited() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.visited...)
}

func (s *Site) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "Home", `<h1>Welcome to the shop</h1><p><a href="/login">Sign in</a> to see the items.</p>`)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "Sign in", loginForm(""))
	})
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(SessionCookie); err == nil {
			s.mu.Lock()
			delete(s.sessions, c.Value)
			s.mu.Unlock()
		}
		http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /items", s.signedIn(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<h1>Items</h1><ul>`)
		for _, it := range Items {
			fmt.Fprintf(&b, `<li><a href="/items/%s">%s</a></li>`, it.ID, template.HTMLEscapeString(it.Name))
		}
		b.WriteString(`</ul><p><a href="/logout">Sign out</a></p>`)
		render(w, http.StatusOK, "Items", b.String())
	}))
	mux.HandleFunc("GET /items/{id}", s.signedIn(func(w http.ResponseWriter, r *http.Request) {
		for _, it := range Items {
			if it.ID == r.PathValue("id") {
				render(w, http.StatusOK, it.Name, fmt.Sprintf(`<h1>%s</h1><p id="price">Price: %s</p><p><a href="/items">Back to the items</a></p>`,
					template.HTMLEscapeString(it.Name), it.Price))
				return
			}
		}
		render(w, http.StatusNotFound, "Not found", `<h1>No such item</h1><p><a href="/items">Back to the items</a></p>`)
	}))
	mux.HandleFunc("GET /board", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "Board", board)
	})
	return s.record(mux)
}

// record notes every request before serving it.
func (s *Site) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/favicon.ico" {
			s.mu.Lock()
			s.visited = append(s.visited, r.Method+" "+r.URL.Path)
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Site) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	ok := r.PostForm.Get("username") == s.opts.Username && r.PostForm.Get("password") == s.opts.Password
	s.mu.Lock()
	s.logins = append(s.logins, ok)
	s.mu.Unlock()
	if !ok {
		render(w, http.StatusUnauthorized, "Sign in", loginForm("Wrong username or password."))
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	s.mu.Lock()
	s.sessions[token] = true
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/items", http.StatusSeeOther)
}

// signedIn serves h to a signed-in visitor and redirects others to /login.
func (s *Site) signedIn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(SessionCookie)
		s.mu.Lock()
		ok := err == nil && s.sessions[c.Value]
		s.mu.Unlock()
		if !ok {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		h(w, r)
	}
}

func loginForm(errText string) string {
	var b strings.Builder
	b.WriteString(`<h1>Sign in</h1>`)
	if errText != "" {
		fmt.Fprintf(&b, `<p role="alert" id="error">%s</p>`, template.HTMLEscapeString(errText))
	}
	b.WriteString(`<form method="post" action="/login">
<p><label for="username">Username</label> <input id="username" name="username" autocomplete="off"></p>
<p><label for="password">Password</label> <input id="password" name="password" type="password"></p>
<p><button type="submit">Sign in</button></p>
</form>`)
	return b.String()
}

// board places its elements at the positions of Board; the card follows
// the mouse while the button is down, as pointer-driven drag widgets do.
const board = `<style>body{margin:0} .abs{position:absolute}</style>
<h1 class="abs" style="left:100px;top:20px;margin:0;font-size:24px">Board</h1>
<button id="reveal" class="abs" style="left:100px;top:100px;width:160px;height:48px"
  onclick="document.getElementById('code').textContent = 'Code: ` + RevealedCode + `'">Reveal code</button>
<p id="code" class="abs" style="left:300px;top:100px;margin:0"></p>
<div id="card" class="abs" style="left:110px;top:300px;width:60px;height:60px;background:#39f;color:#fff">Card</div>
<div id="box" class="abs" style="left:500px;top:300px;width:120px;height:80px;border:2px dashed #555">Box</div>
<script>
const card = document.getElementById('card'), box = document.getElementById('box');
card.addEventListener('mousedown', () => {
  const move = m => { card.style.left = (m.clientX - 30) + 'px'; card.style.top = (m.clientY - 30) + 'px'; };
  const up = u => {
    removeEventListener('mousemove', move); removeEventListener('mouseup', up);
    const r = box.getBoundingClientRect();
    if (u.clientX >= r.left && u.clientX <= r.right && u.clientY >= r.top && u.clientY <= r.bottom) box.textContent = 'Dropped';
  };
  addEventListener('mousemove', move); addEventListener('mouseup', up);
});
</script>`

// render writes a page.
func render(w http.ResponseWriter, status int, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title></head><body>%s</body></html>",
		template.HTMLEscapeString(title), body)
}
