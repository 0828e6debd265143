import { describe, expect, it } from 'vitest'
import { compileMetadataFilters } from '../../packages/adapters/src/semantic-retriever/metadata-filters.js'
import { RpcFailure } from '../../packages/adapters/src/rpc/status.js'

const G = 'chunk.custom_metadata.genre'
const Y = 'chunk.custom_metadata.year'
const T = 'chunk.custom_metadata.tags'

/** The INVALID_ARGUMENT field violation `compile` throws. */
function violation(compile: () => unknown): { field: string; description: string } {
  try {
    compile()
  } catch (error) {
    if (!(error instanceof RpcFailure)) throw error
    expect(error.status.code).toBe(3)
    const details = error.status.details as unknown as { fieldViolations: { field: string; description: string }[] }[]
    return details[0]?.fieldViolations[0] as { field: string; description: string }
  }
  throw new Error('no failure')
}

describe("Google's metadataFilters shape", () => {
  it('ORs conditions inside a MetadataFilter and ANDs the filters (numeric ranges on one key)', () => {
    expect(
      compileMetadataFilters(
        [
          { key: G, conditions: [{ operation: 'EQUAL', stringValue: 'drama' }, { operation: 'EQUAL', stringValue: 'news' }] },
          { key: Y, conditions: [{ operation: 'GREATER', numericValue: 2015 }] },
          { key: Y, conditions: [{ operation: 'LESS_EQUAL', numericValue: 2020 }] },
          { key: T, conditions: [{ operation: 'EXCLUDES', stringValue: 'old' }] },
        ],
        'corpus',
      ),
    ).toEqual({
      op: 'and',
      filters: [
        { op: 'or', filters: [{ op: 'eq', field: G, value: 'drama' }, { op: 'eq', field: G, value: 'news' }] },
        { op: 'gt', field: Y, value: 2015 },
        { op: 'lte', field: Y, value: 2020 },
        { op: 'excludes', field: T, value: 'old' },
      ],
    })
    expect(compileMetadataFilters([], 'corpus')).toBeUndefined()
  })

  it('refuses ANDed string conditions on one key and operations with a value type they never take, naming the field', () => {
    const anded = violation(() => compileMetadataFilters([{ key: G, conditions: [{ operation: 'EQUAL', stringValue: 'drama' }] }, { key: G, conditions: [{ operation: 'EQUAL', stringValue: 'news' }] }], 'corpus'))
    expect(anded.field).toBe('metadataFilters[1].conditions[0]')
    expect(anded.description).toMatch(/must be ORed inside one MetadataFilter \(metadataFilters\[0\]\)/)
    expect(violation(() => compileMetadataFilters([{ key: Y, conditions: [{ operation: 'LESS', stringValue: '2020' }] }], 'corpus'))).toEqual({ field: 'metadataFilters[0].conditions[0].stringValue', description: 'LESS compares numbers: use numericValue.' })
    expect(violation(() => compileMetadataFilters([{ key: T, conditions: [{ operation: 'INCLUDES', numericValue: 1 }] }], 'corpus'))).toEqual({ field: 'metadataFilters[0].conditions[0].numericValue', description: 'INCLUDES tests a string list for a stringValue.' })
    expect(violation(() => compileMetadataFilters([{ key: Y, conditions: [] }], 'corpus')).field).toBe('metadataFilters[0].conditions')
    expect(violation(() => compileMetadataFilters([{ key: Y, conditions: [{ operation: 'EQUAL' }] }], 'corpus')).field).toBe('metadataFilters[0].conditions[0]')
  })

  it('checks every key and operation before any value, and keeps document keys out of a document query', () => {
    const filters = [{ key: Y, conditions: [{ operation: 'LESS' as const, stringValue: 'x' }] }, { key: 'year', conditions: [{ operation: 'EQUAL' as const, numericValue: 1 }] }]
    expect(violation(() => compileMetadataFilters(filters, 'corpus')).field).toBe('metadataFilters[1].key')
    expect(violation(() => compileMetadataFilters([{ key: Y, conditions: [{ operation: 'OPERATOR_UNSPECIFIED', numericValue: 1 }] }], 'corpus')).field).toBe('metadataFilters[0].conditions[0].operation')
    expect(violation(() => compileMetadataFilters([{ key: 'document.custom_metadata.year', conditions: [{ operation: 'EQUAL', numericValue: 1 }] }], 'document')).field).toBe('metadataFilters[0].key')
    expect(compileMetadataFilters([{ key: 'document.custom_metadata.year', conditions: [{ operation: 'EQUAL', numericValue: 1 }] }], 'corpus')).toEqual({ op: 'and', filters: [{ op: 'eq', field: 'document.custom_metadata.year', value: 1 }] })
  })
})
