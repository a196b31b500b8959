// Package webapp is Pacerelle's web app for a person: pair a device with an
// agent, send requests, read the replies and answer widgets. Everything
// cryptographic happens in the browser (static/pcr.js, on WebCrypto and the
// bundled HPKE X-Wing): the server only serves these files and the relay
// API next to them sees envelopes. `vantagepeers serve` mounts it at Prefix.
package webapp

//go:generate ../../../scripts/pacerelle-bundle.sh

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// Prefix is where the app is mounted (shared/httpapi/routes.go).
const Prefix = "/pacerelle/app/"

//go:embed static/*.js static/*.css static/*.svg
var staticFS embed.FS

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// CSP forbids everything but this origin's own files: no inline script or
// style, no framing, no form posted elsewhere. The relay API and its
// doorbell (connect-src) are on the same origin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the pages and their static files under Prefix.
func Handler(log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix+"static/", secure(files, false))
	for _, p := range []string{"", "pair", "chat"} {
		name := p
		if name == "" {
			name = "home"
		}
		pattern := "GET " + Prefix + p
		if p == "" {
			pattern += "{$}"
		}
		mux.Handle(pattern, secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lang := Lang(r)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Language", lang)
			w.Header().Set("Vary", "Accept-Language")
			if err := pages.ExecuteTemplate(w, "layout.html", view{Page: name, Lang: lang, T: strs[lang]}); err != nil {
				log.ErrorContext(r.Context(), "pacerelle app page", "page", name, "err", err)
			}
		}), true))
	}
	return mux
}

type view struct {
	Page string
	Lang string
	T    map[string]string
}

func secure(h http.Handler, page bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		if page {
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

// Lang is the page language: ?lang=en|fr, else the preferred of English
// and French in Accept-Language (by q, then order), else English.
func Lang(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); l == "en" || l == "fr" {
		return l
	}
	best, bestQ := "en", 0.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if base != "en" && base != "fr" {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > bestQ {
			best, bestQ = base, q
		}
	}
	return best
}

// Strings are the page texts by language (TestStrings: the same keys in
// every language).
func Strings() map[string]map[string]string { return strs }
