// redlock@5.0.0-beta.2 ships typings its package.json "exports" does not point
// to; the bench only needs the constructor and describes its shape where used.
declare module 'redlock' {
  const Redlock: unknown;
  export default Redlock;
}
