// Writes index.d.ts and index.js (committed; `make check-generated` fails
// when they are stale) as `napi build --platform` does, from the type
// definitions napi-derive wrote while `make build-release` compiled this
// crate: the Makefile points NAPI_TYPE_DEF_TMP_FOLDER at TYPE_DEF_DIR for
// that build, so no second (debug) build of the binding is needed.
//
//   node write-index.mjs TYPE_DEF_DIR
//
// The rendering is @napi-rs/cli's own (generateTypeDef, writeJsBinding),
// called with the options `napi build --platform` passes for this package.
import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateTypeDef, readNapiConfig, writeJsBinding } from '@napi-rs/cli'

const typeDefDir = process.argv[2]
const cwd = dirname(fileURLToPath(import.meta.url))
const config = await readNapiConfig(join(cwd, 'package.json'))
// napi-derive names its file after the crate; without it the build did not
// run with NAPI_TYPE_DEF_TMP_FOLDER set, and an empty index.d.ts would follow.
if (!typeDefDir) {
  console.error('usage: node write-index.mjs TYPE_DEF_DIR')
  process.exit(2)
}
const crateFile = join(typeDefDir, 'shardring-node')
if (!existsSync(crateFile)) {
  console.error(`write-index: no type definitions at ${crateFile} (make build-release writes them when it compiles the binding: touch node/src/lib.rs and run it again)`)
  process.exit(1)
}

const { exports, dts } = await generateTypeDef({
  typeDefDir,
  cwd,
  configDtsHeader: config.dtsHeader,
  configDtsHeaderFile: config.dtsHeaderFile,
  constEnum: config.constEnum,
  runtimeStringEnum: config.runtimeStringEnum,
  // napi build declares the loader's binding target whenever it writes a
  // platform loader with exports (no WASI targets here).
  declareBindingTarget: (names) => names.length > 0,
})
writeFileSync(join(cwd, 'index.d.ts'), dts)
await writeJsBinding({
  platform: true,
  idents: exports,
  binaryName: config.binaryName,
  packageName: config.packageName,
  version: config.packageJson.version,
  outputDir: cwd,
  wasiFlavors: [],
})
