package vp

// Profile is an orchestrator's identity and state. The row with an empty
// InstanceID is the orchestrator's profile; rows with an InstanceID are the
// presence of one running instance of it (set_summary). Every row takes part
// in list_peers, and every orchestrator with a row receives broadcasts.
type Profile struct {
	ID           string         `json:"_id"`
	CreationTime int64          `json:"_creationTime"`
	Orchestrator string         `json:"orchestratorId"`
	InstanceID   string         `json:"instanceId,omitempty"`
	Name         string         `json:"name,omitempty"`
	Static       *ProfileStatic `json:"static,omitempty"`
	Dynamic      *ProfileDyn    `json:"dynamic,omitempty"`
	Summary      string         `json:"summary,omitempty"`
	UpdatedAt    int64          `json:"updatedAt"`
}

// ProfileStatic holds fields that describe who the orchestrator is.
type ProfileStatic struct {
	Role         string   `json:"role,omitempty"`
	Workspace    string   `json:"workspace,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
}

// ProfileDyn holds runtime state.
type ProfileDyn struct {
	CurrentTask  string `json:"currentTask,omitempty"`
	LastSeen     int64  `json:"lastSeen,omitempty"`
	SessionCount int64  `json:"sessionCount,omitempty"`
}

// Message is one message as sent.
type Message struct {
	ID             string `json:"_id"`
	CreationTime   int64  `json:"_creationTime"`
	From           string `json:"from"`
	FromInstanceID string `json:"fromInstanceId,omitempty"`
	Channel        string `json:"channel"`
	Content        string `json:"content"`
	InstanceID     string `json:"instanceId,omitempty"`
	SessionDay     *int64 `json:"sessionDay,omitempty"`
	TenantLabel    string `json:"tenantId,omitempty"`
	Recipients     int    `json:"recipients"`
	CreatedAt      int64  `json:"createdAt"`
}

// Receipt is one recipient's copy of a message: unread until ReadAt is set.
// It carries the message's fields so that an inbox is one index query.
type Receipt struct {
	ID                  string `json:"receiptId"`
	MessageID           string `json:"messageId"`
	Recipient           string `json:"recipient"`
	RecipientInstanceID string `json:"recipientInstanceId,omitempty"`
	From                string `json:"from"`
	FromInstanceID      string `json:"fromInstanceId,omitempty"`
	Channel             string `json:"channel"`
	Content             string `json:"content"`
	TenantLabel         string `json:"tenantId,omitempty"`
	CreatedAt           int64  `json:"createdAt"`
	ReadAt              *int64 `json:"readAt"`
}
