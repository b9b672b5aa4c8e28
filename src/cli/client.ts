// The client moved to src/client/; this re-export keeps the CLI's imports working until they name it.
export * from '../client/http.js';
