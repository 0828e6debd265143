# Kept in src/, not at the package root: npm and pnpm run `node-gyp rebuild` at install for a root
# binding.gyp. Building from source is an opt-in: `npm run build-from-source` (see README.md).
{
  "targets": [
    {
      "target_name": "quarry_hnsw",
      "sources": ["graph.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "../vendor/hnswlib"],
      "defines": ["NAPI_CPP_EXCEPTIONS", "NAPI_VERSION=8"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wno-type-limits", "-Wno-unused-function"],
      "conditions": [
        ["OS=='win'", {
          "defines": ["_HAS_EXCEPTIONS=1"],
          "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1 } }
        }],
        ["OS=='mac'", {
          "xcode_settings": {
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "GCC_SYMBOLS_PRIVATE_EXTERN": "YES"
          }
        }]
      ]
    }
  ]
}
