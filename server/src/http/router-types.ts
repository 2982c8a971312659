import { initServer } from '@ts-rest/express';

/** The one ts-rest server instance; routers are typed against the contract through it. */
export const s = initServer();
