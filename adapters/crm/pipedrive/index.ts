import * as v from 'valibot'
import { defineCrmPoller } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { EventName, InitialLookbackDays, NonEmpty, OverlapMinutes, httpUrl, pageSize } from '../shared/options.ts'
import { pollPipedrive } from './poll.ts'
import { PIPEDRIVE_API_VERSION } from './version.ts'

export interface PipedriveOptions {
  apiToken: string
  eventName: string
  /** Qualified = a deal in one of these stages (its person's primary email). */
  dealStageIds?: number[]
  /** Qualified = a person whose field holds one of these values (option ids or text, compared as text). */
  personField?: { key: string, values: string[] }
  overlapMinutes: number
  initialLookbackDays: number
  pageSize: number
  baseUrl: string
}

const StageId = v.pipe(v.number('must be a stage id (a number)'), v.integer('must be a whole number'), v.minValue(1, 'must be a stage id (1 or more)'))
const FieldValue = v.pipe(v.union([NonEmpty, v.pipe(v.number(), v.integer())], 'must be an option id or a text value'), v.transform(String))

/** `sites[].crm.pipedrive`: exactly one of dealStageIds and personField says what "qualified" means. */
export const pipedriveOptions = v.pipe(
  strictOptions(
    {
      apiToken: NonEmpty,
      eventName: EventName,
      dealStageIds: v.optional(v.pipe(v.array(StageId, 'must be a list of stage ids'), v.minLength(1, 'must list at least one stage id'), v.maxLength(10, 'must list at most 10 stage ids'))),
      personField: v.optional(strictOptions(
        {
          key: v.pipe(NonEmpty, v.regex(/^(label_ids|[a-z0-9_]+)$/, 'must be a person field key (the 40-character key of a custom field, or label_ids)')),
          values: v.pipe(v.array(FieldValue, 'must be a list of values'), v.minLength(1, 'must list at least one value'), v.maxLength(20, 'must list at most 20 values')),
        },
        'key and values',
      )),
      overlapMinutes: OverlapMinutes,
      initialLookbackDays: InitialLookbackDays,
      pageSize: pageSize(1, 500, 500),
      baseUrl: v.optional(httpUrl('https://api.pipedrive.com'), 'https://api.pipedrive.com'),
    },
    'apiToken, eventName and dealStageIds or personField',
  ),
  v.check((options) => (options.dealStageIds === undefined) !== (options.personField === undefined), 'set exactly one of dealStageIds (a deal reaching a stage) and personField (a person field value)'),
) satisfies v.GenericSchema<unknown, PipedriveOptions>

/** Pipedrive API v2, polled for deals that reached a qualified stage or persons whose field says qualified. README.md. */
export default defineCrmPoller<PipedriveOptions>({
  name: 'pipedrive',
  apiVersion: PIPEDRIVE_API_VERSION,
  options: pipedriveOptions,
  intervalSeconds: 300,
  poll: pollPipedrive,
})
