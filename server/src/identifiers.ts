const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a client's identifier can be a row id at all: anything else is no row, and never reaches PostgreSQL's uuid cast. */
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);
