package awsapp

import (
	"time"

	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
)

// okfDownloadTTL is how long a signed bundle download URL works.
const okfDownloadTTL = 10 * time.Minute

// okfLinks returns the signer of OKF download URLs, or nil when bundles
// are not offered. The key is derived from the cursor key
// (okfsvc.NewLinks), shared by every container.
func (a *App) okfLinks() *okfsvc.Links {
	if a.OKF == nil || len(a.Keys.Cursor) == 0 {
		return nil
	}
	return okfsvc.NewLinks(a.Keys.Cursor, a.Config.PublicBaseURL, okfDownloadTTL)
}
