// Package consent renders the OAuth consent page: a server-rendered form,
// without JavaScript, in English and French, under a CSP that allows no
// script and no framing. Step one names the client and asks for the
// person's token; step two shows what the client will get (identity,
// tenant, namespaces) with a checkbox per namespace, to narrow it.
package consent

import (
	_ "embed"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

//go:embed consent.html
var pageHTML string

// tmpl is parsed on first use: the mcp and embedder functions link this
// package but never render the page, and parsing it took ~4 ms of their
// cold start.
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("consent").Funcs(template.FuncMap{"list": describeList}).Parse(pageHTML))
})

// describeList renders a list for people: "nothing", "everything" or the
// entries.
func describeList(v []string, t Texts) string {
	if len(v) == 0 {
		return t.Nothing
	}
	if slices.Contains(v, vp.Wildcard) {
		return t.Everything
	}
	return strings.Join(v, ", ")
}

// Lists are what a grant (or a profile's ceiling) allows.
type Lists struct {
	ActsAs, Read, Write []string
}

// Review is step two: what the client will get on approval, as the person
// signed in; Ticket carries the sign-in to the approval.
type Review struct {
	Tenant string
	Lists
	Ticket string
}

// Field is a hidden field of the form.
type Field struct{ Name, Value string }

// Page is what the page shows.
type Page struct {
	T     Texts
	Lang  string
	Error string
	Fatal bool // no form: the request itself is bad
	// The client and where the browser goes back to.
	ClientName, ClientID, Host    string
	ProfileID, ProfileDescription string
	// Ceiling is the profile's lists when an admin set one (nil: the
	// client gets the person's rights).
	Ceiling *Lists
	// Requested are the rights the client asked for by name (scopes).
	Requested []string
	Review    *Review
	Hidden    []Field
	LangURL   map[string]string
}

// Render writes the page with its security headers: no script, no
// framing, forms posted only here (and, as Chromium applies form-action to
// the redirect that follows, to redirectOrigin).
func Render(w http.ResponseWriter, status int, redirectOrigin string, p Page) {
	h := w.Header()
	formAction := "'self'"
	if redirectOrigin != "" {
		formAction += " " + redirectOrigin
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = tmpl().Execute(w, p)
}

// Texts are the strings of the page in one language.
type Texts struct {
	Lang, Title, Intro, ClientID, ReturnsTo, ProfileLabel, Grants           string
	ActsAs, Reads, Writes, Nothing, Everything, Bounded, TokenLabel         string
	TokenHelp, Approve, Deny, ChooseAction, BadToken, ServerError, NoClient string
	UnknownClient, BadClientDocument, BadRedirect, ErrorTitle, Language     string
	NotCovered, Continue, PersonGrant, Tenant, Requested, Narrow, Expired   string
}

var allTexts = map[string]Texts{
	"en": {
		Lang: "en", Title: "Authorize access to VantagePeers", Intro: "wants to connect to your VantagePeers workspace.",
		ClientID: "Client ID", ReturnsTo: "You will be sent back to", ProfileLabel: "Scope profile it will get",
		Grants: "What its tokens may do", ActsAs: "Act as (send messages from)", Reads: "Read namespaces", Writes: "Write namespaces",
		Nothing: "nothing", Everything: "everything", Bounded: "It never gets more than the token you sign in with may do, and only in that token's tenant.",
		TokenLabel: "Your VantagePeers token", TokenHelp: "A tenant token or the master token (64 hexadecimal characters). It is used to sign you in and is not given to the application.",
		Approve: "Approve", Deny: "Deny", ChooseAction: "Choose Approve or Deny.", BadToken: "That token is not valid (unknown, revoked or expired). Check it and try again.",
		ServerError: "The server could not complete the request. Try again in a moment.", NoClient: "The request names no client (client_id is missing).",
		UnknownClient: "This application is not registered with this server. It must register again.", BadClientDocument: "The application's metadata document could not be used.",
		BadRedirect: "The redirect address does not match any address registered by this application, so the request was stopped.",
		ErrorTitle:  "This authorization request cannot be completed", Language: "Language",
		NotCovered: "The application asks for rights that the token you signed in with (with the namespaces you kept) does not give. Sign in with a token that has them, or deny:",
		Continue:   "Continue", PersonGrant: "It gets what the token you sign in with may do — its identity, tenant and namespaces, never more. Once signed in, you see exactly what and may untick namespaces.",
		Tenant: "Tenant", Requested: "It asks by name for", Narrow: "Untick what it should not get.",
		Expired: "This approval page has expired or was altered. Sign in again.",
	},
	"fr": {
		Lang: "fr", Title: "Autoriser l'accès à VantagePeers", Intro: "souhaite se connecter à votre espace VantagePeers.",
		ClientID: "Identifiant du client", ReturnsTo: "Vous serez renvoyé vers", ProfileLabel: "Profil de portée attribué",
		Grants: "Ce que ses jetons pourront faire", ActsAs: "Agir en tant que (envoyer des messages de)", Reads: "Lire les espaces de noms", Writes: "Écrire dans les espaces de noms",
		Nothing: "rien", Everything: "tout", Bounded: "Elle n'obtient jamais plus que ce que permet le jeton avec lequel vous vous connectez, et seulement dans le locataire de ce jeton.",
		TokenLabel: "Votre jeton VantagePeers", TokenHelp: "Un jeton de locataire ou le jeton maître (64 caractères hexadécimaux). Il sert à vous identifier et n'est pas transmis à l'application.",
		Approve: "Autoriser", Deny: "Refuser", ChooseAction: "Choisissez Autoriser ou Refuser.", BadToken: "Ce jeton n'est pas valide (inconnu, révoqué ou expiré). Vérifiez-le et réessayez.",
		ServerError: "Le serveur n'a pas pu traiter la demande. Réessayez dans un instant.", NoClient: "La demande ne nomme aucun client (client_id manquant).",
		UnknownClient: "Cette application n'est pas enregistrée sur ce serveur. Elle doit s'enregistrer de nouveau.", BadClientDocument: "Le document de métadonnées de l'application est inutilisable.",
		BadRedirect: "L'adresse de redirection ne correspond à aucune adresse enregistrée par cette application : la demande a été arrêtée.",
		ErrorTitle:  "Cette demande d'autorisation ne peut pas aboutir", Language: "Langue",
		NotCovered: "L'application demande des droits que le jeton avec lequel vous vous connectez (avec les espaces de noms conservés) ne donne pas. Connectez-vous avec un jeton qui les a, ou refusez :",
		Continue:   "Continuer", PersonGrant: "Elle obtient ce que peut faire le jeton avec lequel vous vous connectez — son identité, son locataire et ses espaces de noms, jamais plus. Une fois connecté, vous voyez exactement quoi et pouvez décocher des espaces de noms.",
		Tenant: "Locataire", Requested: "Elle demande nommément", Narrow: "Décochez ce qu'elle ne doit pas obtenir.",
		Expired: "Cette page d'autorisation a expiré ou a été modifiée. Connectez-vous de nouveau.",
	},
}

// descriptions translate the seeded descriptions of the built-in profiles
// (an admin's own wording is shown as written).
var descriptions = map[string]map[string]string{
	"fr": {
		"master":          "Administration complète : tous les espaces de noms, toutes les adresses d'expéditeur. Seulement pour les clients qu'un administrateur élève ; jamais attribué par l'auto-enregistrement.",
		"client-generic":  "Par défaut : le client obtient ce que peut faire la personne qui l'autorise (l'identité, le locataire et les espaces de noms du jeton avec lequel elle se connecte, restreints sur cette page) ; sans personne (client credentials), rien.",
		"public-readonly": "Lecture seule de l'espace de noms partagé global ; ne peut ni écrire ni envoyer de messages.",
	},
}

// Description is the translation of built-in profile id's description.
func Description(lang, id string) (string, bool) {
	d, ok := descriptions[lang][id]
	return d, ok
}

// Pick chooses the language: ?lang= (or the form's lang), else the
// best of Accept-Language, else English.
func Pick(r *http.Request, explicit string) Texts {
	if t, ok := allTexts[explicit]; ok {
		return t
	}
	type choice struct {
		lang string
		q    float64
	}
	var cs []choice
	for i, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if _, ok := allTexts[primary]; ok && q > 0 {
			cs = append(cs, choice{primary, q - float64(i)*1e-6})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].q > cs[j].q })
	if len(cs) > 0 {
		return allTexts[cs[0].lang]
	}
	return allTexts["en"]
}
