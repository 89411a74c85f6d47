import type { ConversionInput } from '../../core/delivery/pipeline.ts'
import type { ConversionRequestOutput } from './schema.ts'

/** The validated request body in the pipeline's terms. */
export function toConversionInput(body: ConversionRequestOutput): ConversionInput {
  const properties = body.properties ?? {}
  const context = body.context ?? {}
  return {
    messageId: body.messageId,
    event: body.event,
    occurredAt: body.timestamp,
    userId: body.userId,
    anonymousId: body.anonymousId,
    value: properties.value,
    currency: properties.currency,
    orderId: properties.order_id,
    items: properties.items,
    channel: properties.channel,
    traits: context.traits,
    identifiers: context.identifiers,
    ip: context.ip,
    userAgent: context.userAgent,
    pageUrl: context.page?.url,
    contentName: properties.content_name,
    contentCategory: properties.content_category,
  }
}
