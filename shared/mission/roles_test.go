package mission_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/mission"
)

// new-feature-v1 names roles, not one team's agents: the context maps each
// role to an agent, and an unmapped role's steps go to the pilot.
func TestNewFeatureTemplateAssignsRolesTheContextMaps(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		pi := as("acme", "pi")
		tpl, err := svc.GetMissionTemplate(ctx(), pi, mission.TemplateRef{Name: "new-feature-v1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range tpl.Steps {
			if strings.Contains(st.Description, "dev-") || strings.Contains(st.AssignedTo, "dev-") {
				t.Fatalf("step %q names an in-house agent: %+v", st.Title, st)
			}
		}
		m := mustMission(t, svc, pi, newMissionIn("search-page"))
		res, err := svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "new-feature-v1", MissionID: m.ID,
			Context: map[string]string{"backend": "zeta", "reviewer": "omega"}})
		if err != nil || res.Count != 10 {
			t.Fatalf("instantiate: %+v %v", res, err)
		}
		view, err := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID})
		if err != nil || len(view.Tasks) != 10 {
			t.Fatalf("mission view: %d tasks %v", len(view.Tasks), err)
		}
		want := map[string]string{"Schema + Backend": "zeta", "Code Review": "omega", "Frontend UI": "pi", "Search KB": "pi", "i18n": "pi"}
		for _, tk := range view.Tasks {
			if w, ok := want[tk.Title]; ok && tk.AssignedTo != w {
				t.Errorf("%q assigned to %q, want %q", tk.Title, tk.AssignedTo, w)
			}
			if strings.Contains(tk.AssignedTo, "{{") {
				t.Errorf("%q assigned to a placeholder %q", tk.Title, tk.AssignedTo)
			}
		}
	})
}
