/**
 * The short names (after `<doc>/chunks/`) of every chunk a server's Semantic Retriever document
 * serves over REST, page by page in its order.
 */
export async function chunkNames(base: string, doc: string): Promise<string[]> {
  const names: string[] = []
  let token = ''
  do {
    const page = (await (await fetch(`${base}/v1beta/${doc}/chunks?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)).json()) as { chunks?: { name: string }[]; nextPageToken?: string }
    names.push(...(page.chunks ?? []).map((c) => c.name.slice(doc.length + '/chunks/'.length)))
    token = page.nextPageToken ?? ''
  } while (token !== '')
  return names
}
