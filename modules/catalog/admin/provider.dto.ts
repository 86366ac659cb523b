import { IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PROVIDER_TYPES, type ProviderSettings, type ProviderType } from '../../../events/index.js';

/** How to reach a provider; the names match the YAML configuration. */
export class ProviderSettingsDto {
  @IsIn(PROVIDER_TYPES)
  type!: ProviderType;

  @IsOptional() @IsString() @MaxLength(2048)
  baseUrl?: string | null;

  /** A reference to the credential (env:NAME or file:PATH), never the credential itself. */
  @IsOptional() @Matches(/^(env:[A-Za-z_][A-Za-z0-9_]*|file:.+)$/, { message: 'apiKey must be a secret reference (env:NAME or file:PATH), never the secret itself' })
  apiKey?: string | null;

  @IsOptional() @IsString() @MaxLength(64)
  apiVersion?: string | null;

  @IsOptional() @IsString() @MaxLength(64)
  region?: string | null;

  @IsOptional() @IsBoolean()
  allowPrivateNetwork?: boolean;
}

export class RegisterProviderDto extends ProviderSettingsDto {
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'id must use letters, digits, ".", "_" and "-" (at most 64)' })
  id!: string;
}

export function providerSettingsOf(dto: ProviderSettingsDto): ProviderSettings {
  return {
    type: dto.type,
    baseUrl: dto.baseUrl ?? null,
    credentialRef: dto.apiKey ?? null,
    apiVersion: dto.apiVersion ?? null,
    region: dto.region ?? null,
    allowPrivateNetwork: dto.allowPrivateNetwork ?? false,
  };
}
