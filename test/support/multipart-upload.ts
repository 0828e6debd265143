/** The body of an uploadRagFile request as Google's clients send it: a `metadata` JSON part and a `file` part. */
export function multipartUpload(displayName: string, content: string | Uint8Array): { readonly body: Uint8Array; readonly contentType: string } {
  const boundary = 'quarry-upload-boundary'
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="metadata"\r\ncontent-type: application/json\r\n\r\n${JSON.stringify({ ragFile: { displayName } })}\r\n`),
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${displayName}"\r\ncontent-type: application/octet-stream\r\n\r\n`),
    Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  return { body: new Uint8Array(body), contentType: `multipart/form-data; boundary=${boundary}` }
}
