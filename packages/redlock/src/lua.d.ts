declare module '*.lua' {
  const source: string;
  export default source;
}
