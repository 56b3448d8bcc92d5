// workerd and esbuild hand a `.wasm` import over as a compiled WebAssembly.Module.
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
