package uiview

// The languages of the views (platform spec §15.2: ?lang=en|fr, default en).
const (
	LangEN = "en"
	LangFR = "fr"
)

// texts is every label of the views, per language. A key prefixed with a
// primitive ("tasks-table.title") belongs to that view; T looks it up
// before the bare key. The same table goes to the page as JSON so that
// the script renders a tool result in the host's locale with the same
// words ("one"/"other": the count's singular and plural, %d the number).
var texts = map[string]map[string]string{
	LangEN: {
		"tasks-table.title": "Tasks", "tasks-table.one": "%d task", "tasks-table.other": "%d tasks", "tasks-table.empty": "No tasks.",
		"messages-feed.title": "Messages", "messages-feed.one": "%d message", "messages-feed.other": "%d messages", "messages-feed.empty": "No messages.",
		"diary-entry.title": "Diary", "diary-entry.one": "%d entry", "diary-entry.other": "%d entries", "diary-entry.empty": "No diary entries.",
		"mission-timeline.title": "Missions", "mission-timeline.one": "%d mission", "mission-timeline.other": "%d missions", "mission-timeline.empty": "No missions.",
		"briefing-note.title": "Briefing notes", "briefing-note.one": "%d note", "briefing-note.other": "%d notes", "briefing-note.empty": "No briefing notes.",
		"memory-quote.title": "Memories", "memory-quote.one": "%d memory", "memory-quote.other": "%d memories", "memory-quote.empty": "No memories.",

		"col.title": "Title", "col.status": "Status", "col.priority": "Priority", "col.assignedTo": "Assigned to",
		"from": "From", "channel": "Channel", "sent": "Sent", "orchestrator": "Orchestrator", "highlights": "Highlights", "blockers": "Blockers",
		"project": "Project", "pilot": "Pilot", "progress": "Progress", "topic": "Topic", "participants": "Participants",
		"namespace": "Namespace", "type": "Type", "score": "Score",
		"waiting": "Waiting for the tool result…", "loading": "Loading…", "failed": "The data could not be read.",
		"error": "Could not read the data:", "badResult": "the tool result has no data this view can show",

		"status.todo": "To do", "status.in_progress": "In progress", "status.review": "In review", "status.blocked": "Blocked",
		"status.done": "Done", "status.cancelled": "Cancelled", "status.failed": "Failed", "status.brainstorm": "Brainstorm", "status.plan": "Plan",
		"status.execute": "Execute", "status.validate": "Validate", "status.complete": "Complete",
		"priority.urgent": "Urgent", "priority.high": "High", "priority.medium": "Medium", "priority.low": "Low",
	},
	LangFR: {
		"tasks-table.title": "Tâches", "tasks-table.one": "%d tâche", "tasks-table.other": "%d tâches", "tasks-table.empty": "Aucune tâche.",
		"messages-feed.title": "Messages", "messages-feed.one": "%d message", "messages-feed.other": "%d messages", "messages-feed.empty": "Aucun message.",
		"diary-entry.title": "Journal", "diary-entry.one": "%d entrée", "diary-entry.other": "%d entrées", "diary-entry.empty": "Aucune entrée de journal.",
		"mission-timeline.title": "Missions", "mission-timeline.one": "%d mission", "mission-timeline.other": "%d missions", "mission-timeline.empty": "Aucune mission.",
		"briefing-note.title": "Notes de briefing", "briefing-note.one": "%d note", "briefing-note.other": "%d notes", "briefing-note.empty": "Aucune note de briefing.",
		"memory-quote.title": "Mémoires", "memory-quote.one": "%d mémoire", "memory-quote.other": "%d mémoires", "memory-quote.empty": "Aucune mémoire.",

		"col.title": "Titre", "col.status": "Statut", "col.priority": "Priorité", "col.assignedTo": "Attribué à",
		"from": "De", "channel": "Canal", "sent": "Envoyé", "orchestrator": "Orchestrateur", "highlights": "Points forts", "blockers": "Blocages",
		"project": "Projet", "pilot": "Pilote", "progress": "Progression", "topic": "Sujet", "participants": "Participants",
		"namespace": "Espace de noms", "type": "Type", "score": "Score",
		"waiting": "En attente du résultat de l’outil…", "loading": "Chargement…", "failed": "Les données n’ont pas pu être lues.",
		"error": "Impossible de lire les données :", "badResult": "le résultat de l’outil ne contient aucune donnée affichable ici",

		"status.todo": "À faire", "status.in_progress": "En cours", "status.review": "En revue", "status.blocked": "Bloquée",
		"status.done": "Terminée", "status.cancelled": "Annulée", "status.failed": "Échouée", "status.brainstorm": "Idéation", "status.plan": "Planification",
		"status.execute": "Exécution", "status.validate": "Validation", "status.complete": "Terminée",
		"priority.urgent": "Urgente", "priority.high": "Haute", "priority.medium": "Moyenne", "priority.low": "Basse",
	},
}
