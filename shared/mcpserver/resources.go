package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/uiview"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// uiBase prefixes the MCP Apps views (platform spec §15.2).
const uiBase = "ui://vp/v1/"

// uiResourceMeta is the _meta.ui of every view: it fetches nothing from
// outside (an empty CSP: no domains) and asks the host for a border.
func uiResourceMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{"csp": map[string]any{}, "prefersBorder": true}}
}

// uiToolMeta links a tool to its view (tool.UI) in tools/list.
func uiToolMeta(primitive string) mcp.Meta {
	if primitive == "" {
		return nil
	}
	return mcp.Meta{"ui": map[string]any{"resourceUri": uiBase + primitive}}
}

// uiView is one view: its query parameters (§15.2) and how a query reads
// its data, with the same domain call as the tool that feeds it. The
// limit is bounds-checked before load; load gets it clamped in.
type uiView struct {
	primitive string
	tool      string // the tool whose error texts the view's errors follow
	params    []string
	limit     [2]int // default, max
	load      func(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error)
}

var uiViews = []uiView{
	{uimarker.KindTasksTable, "list_tasks", []string{"assignedTo", "status"}, [2]int{listing.DefaultLimit, listing.MaxLimit}, loadTasks},
	{uimarker.KindMessagesFeed, "list_messages", []string{"from", "channel"}, [2]int{20, 200}, loadMessages},
	{uimarker.KindDiaryEntry, "get_diary", []string{"date", "orchestrator"}, [2]int{5, 50}, loadDiary},
	{uimarker.KindMissionTimeline, "list_missions", []string{"pilot", "project", "status"}, [2]int{10, 100}, loadMissions},
	{uimarker.KindBriefingNote, "get_briefing_note", []string{"noteId", "topic"}, [2]int{5, 50}, loadBriefings},
	{uimarker.KindMemoryQuote, "hybrid_search", []string{"namespace", "type", "query"}, [2]int{5, 50}, loadMemories},
}

// addUIResources registers each view as a resource (the shell a host
// feeds a tool result) and as a template whose query is read on the
// server under the caller's token.
func (s *server) addUIResources(m *mcp.Server) {
	for _, v := range uiViews {
		title := uiview.Title(v.primitive, uiview.LangEN)
		m.AddResource(&mcp.Resource{URI: uiBase + v.primitive, Name: v.primitive, Title: "VantagePeers " + title,
			MIMEType: uiview.MIMEType, Meta: uiResourceMeta(),
			Description: "MCP Apps view of a " + v.tool + " result, sent by the host."}, s.readView(v))
		m.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: uiBase + v.primitive + "{?" + strings.Join(append(v.params, "limit", "lang"), ",") + "}",
			Name:        v.primitive + "-query", Title: "VantagePeers " + title + " (query)", MIMEType: uiview.MIMEType, Meta: uiResourceMeta(),
			Description: fmt.Sprintf("The %s view rendered on the server with the data of a %s query; limit 1-%d (default %d), lang en|fr.",
				v.primitive, v.tool, v.limit[1], v.limit[0]),
		}, s.readView(v))
	}
}

// readView answers resources/read of v. Without a query it is the shell;
// with one, the data read as the caller. A failure to read the data is
// shown in the view's error box: only an unknown URI is a protocol error.
func (s *server) readView(v uiView) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		u, err := url.Parse(uri)
		if err != nil || u.Scheme != "ui" || u.Host+u.Path != strings.TrimPrefix(uiBase, "ui://")+v.primitive {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		q := u.Query()
		page := uiview.Page{Primitive: v.primitive, Lang: q.Get("lang")}
		if page.Lang != "" && page.Lang != uiview.LangEN && page.Lang != uiview.LangFR {
			page.Lang, page.Err = uiview.LangEN, fmt.Sprintf("lang: %q is not en or fr", q.Get("lang"))
		}
		if u.RawQuery != "" && page.Err == "" {
			data, err := s.viewData(ctx, req, v, q)
			if err != nil {
				page.Err = s.toolError(ctx, v.tool, err).Error()
			} else {
				page.Data = &data
			}
		}
		html, err := uiview.Render(page)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: uri, MIMEType: uiview.MIMEType, Text: string(html), Meta: uiResourceMeta(),
		}}}, nil
	}
}

// viewData resolves the caller as the tools do and loads v's data.
func (s *server) viewData(ctx context.Context, req *mcp.ReadResourceRequest, v uiView, q url.Values) (uiview.Data, error) {
	for k := range q {
		if k != "limit" && k != "lang" && !slices.Contains(v.params, k) {
			return uiview.Data{}, vp.Errorf(v.primitive, vp.KindInvalid, k, "%q is not a query parameter of %s (%s, limit, lang)", k, v.primitive, strings.Join(v.params, ", "))
		}
	}
	limit := v.limit[0]
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > v.limit[1] {
			return uiview.Data{}, vp.Errorf(v.primitive, vp.KindInvalid, "limit", "%q is not a whole number within 1-%d", l, v.limit[1])
		}
		limit = n
	}
	p, err := s.principalOf(req.Extra)
	if err == nil && grantsNothing(p) {
		err = vp.E(v.primitive, vp.KindForbidden, "", "this token may read no namespace and act as no orchestrator")
	}
	if err != nil {
		return uiview.Data{}, err
	}
	if !s.opts.Views.serves(v.primitive) {
		return uiview.Data{}, vp.E(v.primitive, vp.KindNotFound, "", "this server does not offer the data of this view")
	}
	return v.load(ctx, s, p, q, limit)
}

// Views are the services the MCP Apps views read their data from; a view
// whose service is nil shows that the server does not offer its data.
type Views struct {
	Tasks     *task.Service
	Messages  *message.Service
	Diary     *diary.Service
	Missions  *mission.Service
	Briefings *briefing.Service
	Memory    *memory.Service
}

func (v Views) serves(primitive string) bool {
	switch primitive {
	case uimarker.KindTasksTable:
		return v.Tasks != nil
	case uimarker.KindMessagesFeed:
		return v.Messages != nil
	case uimarker.KindDiaryEntry:
		return v.Diary != nil
	case uimarker.KindMissionTimeline:
		return v.Missions != nil
	case uimarker.KindBriefingNote:
		return v.Briefings != nil
	}
	return true // the memory view says why it has no data itself
}

// decodeList turns a domain result into the view's items through its
// JSON, whose field names are VpToolResultSchema's (as for the markers).
func decodeList[T any](v any, key string) ([]T, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, vp.Wrap("ui", vp.KindInternal, err)
	}
	l, ok := items[T](b, key)
	if !ok {
		return nil, vp.E("ui", vp.KindInternal, "", "the result does not decode as a list")
	}
	return l, nil
}

func decodeOne[T any](v any) ([]T, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, vp.Wrap("ui", vp.KindInternal, err)
	}
	it, ok := item[T](b)
	if !ok {
		return nil, vp.E("ui", vp.KindInternal, "", "the result does not decode")
	}
	return []T{*it}, nil
}

func limitParams(limit int) listing.Params { return listing.Params{Limit: &limit} }

// statusArg is a status filter, absent when empty.
func statusArg(q url.Values) any {
	if s := q.Get("status"); s != "" {
		return s
	}
	return nil
}

func loadTasks(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error) {
	page, err := s.opts.Views.Tasks.ListTasks(ctx, p, task.ListTasksInput{Params: limitParams(limit), AssignedTo: q.Get("assignedTo"), Status: statusArg(q)})
	if err != nil {
		return uiview.Data{}, err
	}
	l, err := decodeList[uimarker.TasksTable](page, "items")
	return uiview.Data{Tasks: l}, err
}

func loadMessages(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error) {
	page, err := s.opts.Views.Messages.ListMessages(ctx, p, message.ListMessagesInput{From: q.Get("from"), Channel: q.Get("channel"), Params: limitParams(limit)})
	if err != nil {
		return uiview.Data{}, err
	}
	l, err := decodeList[uimarker.MessagesFeed](page, "items")
	return uiview.Data{Messages: l}, err
}

// loadDiary: one entry with a date, else the latest entries.
func loadDiary(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error) {
	if date := q.Get("date"); date != "" {
		e, err := s.opts.Views.Diary.GetDiary(ctx, p, q.Get("orchestrator"), date)
		if err != nil {
			return uiview.Data{}, err
		}
		l, err := decodeOne[uimarker.DiaryEntry](e)
		return uiview.Data{Diary: l}, err
	}
	page, err := s.opts.Views.Diary.ListDiaries(ctx, p, diary.ListInput{Orchestrator: q.Get("orchestrator"), Params: limitParams(limit)})
	if err != nil {
		return uiview.Data{}, err
	}
	l, err := decodeList[uimarker.DiaryEntry](page, "items")
	return uiview.Data{Diary: l}, err
}

func loadMissions(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error) {
	page, err := s.opts.Views.Missions.ListMissions(ctx, p, mission.ListMissionsInput{Params: limitParams(limit),
		Pilot: q.Get("pilot"), Project: q.Get("project"), Status: statusArg(q)})
	if err != nil {
		return uiview.Data{}, err
	}
	l, err := decodeList[uimarker.MissionTimeline](page, "items")
	return uiview.Data{Missions: l}, err
}

// loadBriefings: one note with a noteId, else the latest notes.
func loadBriefings(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error) {
	if id := q.Get("noteId"); id != "" {
		n, err := s.opts.Views.Briefings.GetBriefingNote(ctx, p, id)
		if err != nil {
			return uiview.Data{}, err
		}
		l, err := decodeOne[uimarker.BriefingNote](n)
		return uiview.Data{Briefings: l}, err
	}
	page, err := s.opts.Views.Briefings.ListBriefingNotes(ctx, p, briefing.ListInput{Topic: q.Get("topic"), Params: limitParams(limit)})
	if err != nil {
		return uiview.Data{}, err
	}
	l, err := decodeList[uimarker.BriefingNote](page, "items")
	return uiview.Data{Briefings: l}, err
}

// loadMemories: a query is a hybrid search (of one namespace when given,
// then kept to type); without one, a namespace's latest memories.
func loadMemories(ctx context.Context, s *server, p vp.Principal, q url.Values, limit int) (uiview.Data, error) {
	if s.opts.Views.Memory == nil {
		return uiview.Data{}, vp.E("memory-quote", vp.KindNotFound, "", "this server has no memory service: memories cannot be shown")
	}
	if query := q.Get("query"); query != "" {
		res, err := s.opts.Views.Memory.HybridSearch(ctx, p, memory.SearchInput{Query: query, Namespace: q.Get("namespace"), Limit: limit})
		if err != nil {
			return uiview.Data{}, err
		}
		l, err := decodeList[uimarker.MemoryQuote](res, "results")
		if typ := q.Get("type"); typ != "" {
			kept := l[:0]
			for _, m := range l {
				if m.Type == typ {
					kept = append(kept, m)
				}
			}
			l = kept
		}
		return uiview.Data{Memories: l}, err
	}
	page, err := s.opts.Views.Memory.ListMemories(ctx, p, memory.ListInput{Namespace: q.Get("namespace"), Type: q.Get("type"), Params: limitParams(limit)})
	if err != nil {
		return uiview.Data{}, err
	}
	l, err := decodeList[uimarker.MemoryQuote](page, "items")
	return uiview.Data{Memories: l}, err
}

// serverCapabilities declares tools, resources and the MCP Apps extension
// (the views' MIME type). Tools carry their view whatever the client
// declares: over stateless HTTP there is no session to ask.
func serverCapabilities() *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	c.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []string{uiview.MIMEType}})
	return c
}
