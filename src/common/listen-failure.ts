/**
 * A server of the process could not listen (a port in use, an address not on this machine):
 * start-up reports its message as it is, naming the setting to change, not the database.
 */
export class ListenFailure extends Error {}
