export * from './provider.ts';
export * from './bank.ts';
export {
  DEFAULT_BOUNCE_DOMAINS,
  isBounceAddress,
  isDeliverableAddress,
  isValidEmailSyntax,
  validateMailSend,
  type AddressRule,
  type EmailAddress,
  type SendGridError,
} from './sendgrid-validate.ts';
export { parseActivityQuery, QuerySyntaxError, type ActivityRecord } from './activity-query.ts';
export { SIGNATURE_HEADER, TIMESTAMP_HEADER, signPayload, type SendGridEvent, type WebhookSettings } from './event-webhook.ts';
