/**
 * The web app's door to @beton/people (HR's employee services and imports): the package's
 * PeopleError becomes the dashboard's code-based AppError here, its field errors kept as reason
 * keys (the pages show them in English and Bengali from @beton/people/reasons). Only subpaths
 * are imported: the package index would pull the file parsers into the web server.
 */
import { AppError } from '@beton/dashboard';
import { PeopleError } from '@beton/people/errors';

export async function people<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof PeopleError) throw new AppError(error.code, error.message, error.fieldErrors);
    throw error;
  }
}
