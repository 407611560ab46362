export const EVENT_COLUMNS = ["code", "name", "type", "startsAt", "endsAt", "location", "organizer"];
