export * from './provider.ts';
export * from './bank.ts';
export {
  DEFAULT_REJECT_DOMAINS,
  isAcceptableAddress,
  isRejectedAddress,
  isValidEmailSyntax,
  validateMailSend,
  type AddressRule,
  type EmailAddress,
  type SendGridError,
} from './sendgrid-validate.ts';
export { parseActivityQuery, QuerySyntaxError, type ActivityRecord } from './activity-query.ts';
