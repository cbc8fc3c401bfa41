/**
 * Imported first by a benchmark: graphql-js (and Grafast) read NODE_ENV when they load, and run their
 * development checks unless it says production, as a deployed server runs.
 */
process.env.NODE_ENV ??= 'production';
export {};
