package session

import "github.com/fedcast/fedcast/shared/protocol"

// RefusalWords says in plain words why the coordinator did not count an
// LHA's update or report (the error it answered with). The page lists it
// beside the message sent; the headless client prints it.
func RefusalWords(e *protocol.Error) string {
	switch e.Code {
	case protocol.CodeStaleRound:
		return "it arrived after the round had closed (this computer took longer than the round allows), so the round went on without it"
	case protocol.CodeNotSampled:
		return "the coordinator had not picked this authority for that round"
	case protocol.CodeDuplicateUpdate:
		return "the coordinator already had changes from this authority for that round"
	case protocol.CodeBadUpdate, protocol.CodeTooLarge, protocol.CodeBadFrame:
		return "the coordinator could not accept the changes as sent (" + e.Message + "); tell your study coordinator"
	case protocol.CodeFinished:
		return "the study had already ended"
	case protocol.CodeInternal:
		if e.Message == "" {
			return "the coordinator failed on its own side; nothing is wrong with this computer"
		}
		return "the coordinator failed on its own side (" + e.Message + "); nothing is wrong with this computer"
	}
	return e.Message
}
