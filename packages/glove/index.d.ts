/** Absolute path of the GloVe 6B 100-d vectors in Quarry's 8-bit format (read by @quarry/core's `loadGloveVectors`). */
export declare const vectorsFile: string
