package awsapp

import (
	"net/http"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
)

// okfDownloadTTL is how long a signed bundle download URL works.
const okfDownloadTTL = 10 * time.Minute

// okfLinks returns the signer of OKF download URLs and the handler of
// their route, or nils when bundles are not offered. The key is derived
// from the cursor key (okfsvc.NewLinks), shared by every container.
func (a *App) okfLinks() (*okfsvc.Links, http.Handler) {
	if a.OKF == nil || len(a.Keys.Cursor) == 0 {
		return nil, nil
	}
	l := okfsvc.NewLinks(a.Keys.Cursor, a.Config.PublicBaseURL, okfDownloadTTL)
	return l, l.Handler(a.OKF)
}
