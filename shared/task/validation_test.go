package task_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestCreateTaskValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		cases := []struct {
			name  string
			edit  func(in *task.CreateTaskInput)
			kind  vp.Kind
			field string
		}{
			{"no title", func(in *task.CreateTaskInput) { in.Title = " " }, vp.KindInvalid, "title"},
			{"long title", func(in *task.CreateTaskInput) { in.Title = strings.Repeat("x", vp.MaxTaskTitleBytes+1) }, vp.KindTooLarge, "title"},
			{"no assignee", func(in *task.CreateTaskInput) { in.AssignedTo = "" }, vp.KindInvalid, "assignedTo"},
			{"numeric priority", func(in *task.CreateTaskInput) { in.Priority = "1" }, vp.KindInvalid, "urgent, high, medium, low"},
			{"created done", func(in *task.CreateTaskInput) { in.Status = "done" }, vp.KindInvalid, "status"},
			{"negative estimate", func(in *task.CreateTaskInput) { e := -1.0; in.EstimatedMinutes = &e }, vp.KindInvalid, "estimatedMinutes"},
			{"too many tags", func(in *task.CreateTaskInput) { in.Tags = make([]string, 33) }, vp.KindTooLarge, "tags"},
			{"impersonation", func(in *task.CreateTaskInput) { in.CreatedBy = "bob" }, vp.KindForbidden, "createdBy"},
			{"unknown mission", func(in *task.CreateTaskInput) { in.MissionID = "msn_nope" }, vp.KindNotFound, "missionId"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				in := newTaskIn("valid", "bob")
				c.edit(&in)
				_, err := svc.CreateTask(ctx(), alice, in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, _ := svc.ListTasks(ctx(), alice, task.ListTasksInput{})
		if len(page.Items) != 0 {
			t.Fatalf("refused creates stored %d tasks", len(page.Items))
		}
		got := mustTask(t, svc, alice, task.CreateTaskInput{Title: "ok", AssignedTo: "Bob", Priority: "high", Status: "in_progress"})
		if got.AssignedTo != "bob" || got.CreatedBy != "alice" || got.Status != vp.TaskInProgress || got.StartedAt == nil || got.OpenSegment() != 0 {
			t.Fatalf("created %+v", got)
		}
		_, err := svc.CreateTask(ctx(), admin("acme"), newTaskIn("x", "bob"))
		wantKind(t, err, vp.KindInvalid, "createdBy") // a wildcard token must name its identity
	})
}

func TestValidateTaskPayload(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		check := func(tool string, args map[string]any) task.PayloadReport {
			t.Helper()
			rep, err := svc.ValidateTaskPayload(ctx(), alice, task.PayloadInput{Tool: tool, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		fields := func(rep task.PayloadReport) []string {
			var out []string
			for _, f := range rep.Failures {
				out = append(out, f.Field)
			}
			sort.Strings(out)
			return out
		}
		cases := []struct {
			tool   string
			args   map[string]any
			fields []string
		}{
			{"create_task", map[string]any{"title": "Fix login", "assignedTo": "bob", "priority": "high"}, nil},
			{"create_task", map[string]any{"title": "", "assignedTo": "bob", "priority": 1, "colour": "red"}, []string{"colour", "priority", "title"}},
			{"create_task", map[string]any{"title": "x", "assignedTo": "a#b", "priority": "p1", "status": "done", "createdBy": "bob"}, []string{"assignedTo", "createdBy", "priority", "status"}},
			{"update_task", map[string]any{"taskId": "tsk_1"}, []string{"taskId"}},
			{"update_task", map[string]any{"taskId": "tsk_1", "status": "cancelled"}, []string{"cancelReason"}},
			{"update_task", map[string]any{"taskId": "tsk_1", "status": "finished", "estimatedMinutes": -5}, []string{"estimatedMinutes", "status"}},
			{"complete_task", map[string]any{"taskId": "tsk_1", "completionNote": " "}, []string{"completionNote"}},
			{"start_task", map[string]any{}, []string{"taskId"}},
			{"block_task", map[string]any{"taskId": "tsk_1"}, []string{"reason"}},
			{"checkout_task", map[string]any{"taskId": "tsk_1", "callerOrchestrator": "bob"}, []string{"callerOrchestrator"}},
			{"add_task_dependency", map[string]any{"taskId": "tsk_1", "dependsOn": []any{"tsk_2"}}, []string{"dependsOn"}},
			{"bulk_complete_tasks", map[string]any{"filter": map[string]any{}}, []string{"filter"}},
			{"bulk_complete_tasks", map[string]any{"filter": map[string]any{"assignedTo": "a,b"}, "dryRun": "no"}, []string{"dryRun", "filter.assignedTo"}},
		}
		for _, c := range cases {
			t.Run(c.tool, func(t *testing.T) {
				rep := check(c.tool, c.args)
				if got := fields(rep); !slices.Equal(got, c.fields) || rep.Valid != (len(c.fields) == 0) {
					t.Fatalf("failures on %v, want %v: %+v", got, c.fields, rep.Failures)
				}
				for _, f := range rep.Failures {
					if f.Message == "" || (f.Fix == nil && f.Field != "colour") {
						t.Fatalf("failure without message or fix: %+v", f)
					}
				}
				if !rep.Valid {
					again := check(c.tool, rep.Corrected)
					if !again.Valid {
						t.Fatalf("the corrected payload %v still fails: %+v", rep.Corrected, again.Failures)
					}
				}
			})
		}
		// The write paths refuse with the same messages (one rule set).
		rep := check("create_task", map[string]any{"title": "x", "assignedTo": "bob", "priority": "p1"})
		_, err := svc.CreateTask(ctx(), alice, task.CreateTaskInput{Title: "x", AssignedTo: "bob", Priority: "p1"})
		if err == nil || !strings.HasSuffix(err.Error(), rep.Failures[0].Message) {
			t.Fatalf("write path says %v, validator %q", err, rep.Failures[0].Message)
		}
		rep = check("bulk_complete_tasks", map[string]any{"filter": map[string]any{}})
		_, err = svc.BulkCompleteTasks(ctx(), alice, task.BulkCompleteInput{})
		if err == nil || !strings.HasSuffix(err.Error(), rep.Failures[0].Message) {
			t.Fatalf("write path says %v, validator %q", err, rep.Failures[0].Message)
		}
		_, err = svc.ValidateTaskPayload(ctx(), alice, task.PayloadInput{Tool: "create_mission"})
		wantKind(t, err, vp.KindInvalid, "tool")
		if page, _ := svc.ListTasks(ctx(), alice, task.ListTasksInput{}); len(page.Items) != 0 {
			t.Fatalf("validation wrote %d tasks", len(page.Items))
		}
	})
}
