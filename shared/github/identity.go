package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A marker (<!-- vantagepeers:… -->) says "the bot already made this
// write". Anyone can type one, so it counts only where the bot's own
// account wrote it, and only as the last line of the body: a marker
// quoted inside a body (a logged message that carries another error's
// marker, say) is text, not a marker.

// hasMarker reports whether body ends with marker (trailing white space
// aside, which GitHub may add).
func hasMarker(body, marker string) bool {
	return strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), marker)
}

// byBot reports whether u is the bot's account.
func byBot(u *gogithub.User, login string) bool {
	return login != "" && strings.EqualFold(u.GetLogin(), login)
}

// logins caches the login each tenant's token acts as: learned once per
// tenant and token (a rotated token is asked again).
type logins struct {
	mu sync.Mutex
	m  map[string]string
}

func loginKey(a Account) string {
	sum := sha256.Sum256([]byte(a.Token))
	return a.Tenant + "\x00" + hex.EncodeToString(sum[:])
}

// botLogin is the login of the account a acts as: a.Login when the
// credentials configure one (a GitHub App's "<slug>[bot]"), else what GET
// /user says of the token, cached. GitHub refuses GET /user to a GitHub
// App's installation token; such a tenant must configure the login.
func (c *Client) botLogin(ctx context.Context, op string, a Account) (string, error) {
	if a.Login != "" {
		return a.Login, nil
	}
	key := loginKey(a)
	c.logins.mu.Lock()
	login, ok := c.logins.m[key]
	c.logins.mu.Unlock()
	if ok {
		return login, nil
	}
	u, resp, err := c.api(a).Users.Get(ctx, "")
	if err != nil {
		e := c.fail(ctx, op, a, resp, err)
		if vp.IsKind(e, vp.KindForbidden) {
			return "", &vp.Error{Op: op, Kind: vp.KindForbidden, Field: "login", Err: e, Msg: fmt.Sprintf(
				"GitHub does not say which account tenant %s's token acts as (GET /user is refused, as it is to a GitHub App installation token), so the bot cannot tell its own markers from forged ones: configure the bot's login (\"<app-slug>[bot]\") with the tenant's GitHub credentials (`vantagepeers github set --tenant %s --login …`, or \"login\" in its secret)",
				a.Tenant, a.Tenant)}
		}
		return "", e
	}
	if login = u.GetLogin(); login == "" {
		return "", vp.Errorf(op, vp.KindUnavailable, "login", "GitHub answered GET /user without a login for tenant %s", a.Tenant)
	}
	c.logins.mu.Lock()
	if c.logins.m == nil {
		c.logins.m = map[string]string{}
	}
	c.logins.m[key] = login
	c.logins.mu.Unlock()
	return login, nil
}
