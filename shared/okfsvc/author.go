package okfsvc

import (
	"fmt"
	"maps"
	"slices"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// foreignAuthor authors the concepts of a foreign bundle imported by a
// token that may act as anyone and names no one first.
const foreignAuthor = "okf-import"

// authorship decides who authors imported records. A bundle is data the
// caller supplies, so the names in it are claims: a record keeps its
// bundle author only when the importing token may act as that name (an
// admin re-importing its export, an agent importing its own records);
// otherwise it is authored by the importer — the token's orchestrator (its
// first, when it acts as several) — and the bundle's author is kept in
// the record's provenance, never as its author.
type authorship struct {
	op string
	p  vp.Principal
	// changed maps each bundle author replaced to who authors instead.
	changed map[string]string
}

// importer is who authors records the token may not sign as their author.
func (a *authorship) importer(kind, src, field, orig string) (string, error) {
	if d := a.p.DefaultOrchestrator(); d != "" {
		return d, nil
	}
	if a.p.CanActAs(foreignAuthor) {
		return foreignAuthor, nil
	}
	scope := "" // a reserved name no grant gives
	if !vp.ReservedOrchestrator(orig) {
		// Acting as the author would keep them: the scope the principal's
		// own refusal names.
		scope = vp.ScopeOf(a.p.MayActAs(a.op, field, orig))
	}
	return "", vp.Errorf(a.op, vp.KindForbidden, field, "%s %s of the bundle is by %q, whom this token may not act as, and the token acts as no orchestrator who could author it instead; import with a token that acts as one",
		kind, src, orig).WithScope(scope)
}

// author returns who authors field (bundle value orig) of record src, and
// records in authors the bundle's value when it is not kept.
func (a *authorship) author(kind, src, field, orig string, authors *map[string]string) (string, error) {
	if orig == "" || (!vp.ReservedOrchestrator(orig) && a.p.CanActAs(orig)) {
		return orig, nil
	}
	who, err := a.importer(kind, src, field, orig)
	if err != nil {
		return "", err
	}
	if *authors == nil {
		*authors = map[string]string{}
	}
	(*authors)[field] = orig
	if a.changed == nil {
		a.changed = map[string]string{}
	}
	a.changed[orig] = who
	return who, nil
}

// attribute rewrites the author fields of units (createdBy; a briefing
// note's updatedBy too) and reports the change in res. bundleAuthors are
// the authors a foreign bundle's concepts name (front matter "author"),
// by source id: provenance only, the concepts already carry the importer.
func (a *authorship) attribute(units []unit, bundleAuthors map[string]string, res *ImportResult) error {
	for i := range units {
		u := &units[i]
		var err error
		switch {
		case u.memory != nil:
			u.memory.CreatedBy, err = a.author(u.kind, u.srcID, "createdBy", u.memory.CreatedBy, &u.authors)
		case u.note != nil:
			if u.note.CreatedBy, err = a.author(u.kind, u.srcID, "createdBy", u.note.CreatedBy, &u.authors); err == nil {
				u.note.UpdatedBy, err = a.author(u.kind, u.srcID, "updatedBy", u.note.UpdatedBy, &u.authors)
			}
		default:
			u.task.CreatedBy, err = a.author(u.kind, u.srcID, "createdBy", u.task.CreatedBy, &u.authors)
		}
		if err != nil {
			return err
		}
		if orig := bundleAuthors[u.srcID]; orig != "" {
			if u.authors == nil {
				u.authors = map[string]string{}
			}
			u.authors["author"] = orig
		}
	}
	if len(a.changed) > 0 {
		res.Reauthored = a.changed
		for _, orig := range slices.Sorted(maps.Keys(a.changed)) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("records by %q are imported as by %q: this token may not act as %q (the bundle's author is kept in their provenance)",
				orig, a.changed[orig], orig))
		}
	}
	return nil
}
